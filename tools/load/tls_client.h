// The client TLS context of a run (OpenSSL): no certificate verification (a
// load tool measures, it does not authenticate), ALPN by protocol, and
// session resumption through tickets kept per connection slot.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "core/result.h"
#include "load/options.h"

namespace torii::load {

class TlsClient {
 public:
  static Result<std::unique_ptr<TlsClient>> create(Protocol protocol);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  SSL_CTX* ctx() const { return ctx_; }

  // Where a connection keeps the session for its next handshake: the new
  // session callback stores tickets here (the SSL's app data points to it).
  struct SessionSlot {
    SSL_SESSION* session = nullptr;
    ~SessionSlot() {
      if (session) SSL_SESSION_free(session);
    }
  };

 private:
  explicit TlsClient(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

// OpenSSL's last error as text (and clears the queue).
std::string tls_error_text();

}  // namespace torii::load
