// `listen ... ssl` in stream (ngx_stream_ssl_module): TLS terminated on
// the client's socket with the context the http ssl module's builder made
// from the server's ssl_* settings; the upstream then gets plain bytes.
// The session drives handshake() from the socket's events like a read.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "stream/endpoint.h"

namespace torii::config {
struct SslServerConfig;
}

namespace torii::stream {

struct Facts;

class TlsServerEndpoint final : public Endpoint {
 public:
  // Null on failure, with `error`.
  static std::unique_ptr<TlsServerEndpoint> start(SSL_CTX* ctx, int fd, std::string& error);
  ~TlsServerEndpoint() override;
  TlsServerEndpoint(const TlsServerEndpoint&) = delete;
  TlsServerEndpoint& operator=(const TlsServerEndpoint&) = delete;

  net::IoResult handshake();
  // The failure behind the last `error` ("SSL_do_handshake() failed (SSL: ...)").
  const std::string& error() const { return error_; }
  // ssl_verify_client's verdict once the handshake is done, as nginx's
  // stream module judges it: empty when the session may go on, else the
  // line to log (the session then ends).
  std::string check_client_certificate(const config::SslServerConfig& s) const;
  // $ssl_protocol, $ssl_cipher, $ssl_server_name, $ssl_session_reused.
  void describe(Facts& f) const;

  net::IoResult read(char* buf, size_t len) override;
  net::IoResult write(const char* data, size_t len) override;
  void shutdown_write() override;
  void close_notify() override;

 private:
  TlsServerEndpoint(SSL* ssl, int fd) : ssl_(ssl), fd_(fd) {}
  net::IoResult failed(int ret, const char* op);

  SSL* ssl_;
  int fd_;
  bool broken_ = false;  // no close_notify after a fatal error
  std::string error_;
};

}  // namespace torii::stream
