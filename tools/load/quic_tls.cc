#include "load/quic_tls.h"

#include <string>

namespace torii::load {

Result<std::unique_ptr<QuicTls>> QuicTls::create() {
  gnutls_certificate_credentials_t c = nullptr;
  if (int rv = gnutls_certificate_allocate_credentials(&c); rv != 0)
    return make_error(std::string("cannot create GnuTLS credentials: ") + gnutls_strerror(rv));
  // No trust store and no gnutls_session_set_verify_cert(): GnuTLS then
  // accepts any certificate, as the TCP modes do with SSL_VERIFY_NONE.
  return std::unique_ptr<QuicTls>(new QuicTls(c));
}

QuicTls::~QuicTls() { gnutls_certificate_free_credentials(credentials_); }

}  // namespace torii::load
