#include "net/quic_tls.h"

#include <string>

#include "config/ssl_config.h"

namespace torii::net {

Result<std::shared_ptr<gnutls_certificate_credentials_st>> build_quic_credentials(const config::SslServerConfig& s) {
  gnutls_certificate_credentials_t raw = nullptr;
  if (int rv = gnutls_certificate_allocate_credentials(&raw); rv != 0)
    return make_error(s.where + "gnutls_certificate_allocate_credentials() failed: " + gnutls_strerror(rv));
  std::shared_ptr<gnutls_certificate_credentials_st> creds(raw, &gnutls_certificate_free_credentials);
  // Each certificate (RSA, ECDSA...) with its key; GnuTLS picks the one the
  // client's signature algorithms allow, as OpenSSL does for TCP.
  for (size_t i = 0; i < s.certificates.size() && i < s.certificate_keys.size(); ++i) {
    const auto& cert = s.certificates[i];
    const auto& key = s.certificate_keys[i];
    int rv = gnutls_certificate_set_x509_key_file(raw, cert.path.c_str(), key.path.c_str(), GNUTLS_X509_FMT_PEM);
    if (rv < 0) {
      return make_error(cert.where + "cannot load certificate \"" + cert.path + "\" with key \"" + key.path +
                        "\" for QUIC: " + gnutls_strerror(rv));
    }
  }
  return creds;
}

}  // namespace torii::net
