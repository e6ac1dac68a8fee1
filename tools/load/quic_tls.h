// The client side of QUIC's TLS for a run (GnuTLS, as ngtcp2's crypto glue
// wants it): credentials with no trust store, so the server's certificate
// is not verified (a load tool measures, it does not authenticate), shared
// read-only by every thread's connections.
#pragma once

#include <gnutls/gnutls.h>

#include <memory>

#include "core/result.h"

namespace torii::load {

class QuicTls {
 public:
  static Result<std::unique_ptr<QuicTls>> create();
  ~QuicTls();
  QuicTls(const QuicTls&) = delete;
  QuicTls& operator=(const QuicTls&) = delete;

  gnutls_certificate_credentials_t credentials() const { return credentials_; }

 private:
  explicit QuicTls(gnutls_certificate_credentials_t c) : credentials_(c) {}
  gnutls_certificate_credentials_t credentials_;
};

// QUIC is TLS 1.3 only (RFC 9001 4.2), with the AEADs QUIC defines packet
// protection for, and without the middlebox compatibility mode (RFC 9001 8.4).
constexpr const char* kQuicClientPriority =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "%DISABLE_TLS13_COMPAT_MODE";

}  // namespace torii::load
