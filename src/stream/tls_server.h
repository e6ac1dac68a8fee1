// `listen ... ssl` in stream (ngx_stream_ssl_module): TLS terminated on
// the client's socket with the context the http ssl module's builder made
// from the server's ssl_* settings; the upstream then gets plain bytes.
// The session drives handshake() from the socket's events like a read.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "net/tls_context.h"
#include "stream/endpoint.h"

namespace torii::config {
struct SslServerConfig;
}

namespace torii::stream {

struct Facts;

class TlsServerEndpoint final : public Endpoint, private net::TlsHandshakeHooks {
 public:
  // `alpn` (ssl_alpn, wire format): the protocols offered; a client that
  // offers ALPN and none of them is refused, as nginx. Null on failure,
  // with `error`.
  static std::unique_ptr<TlsServerEndpoint> start(SSL_CTX* ctx, int fd, std::string_view alpn, std::string& error);
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
  // $ssl_protocol, $ssl_cipher, $ssl_server_name, $ssl_session_reused, $ssl_session_id, $ssl_curve(s).
  // `client_ciphers`: the config reads $ssl_ciphers.
  void describe(Facts& f, bool client_ciphers) const;

  net::IoResult read(char* buf, size_t len) override;
  net::IoResult write(const char* data, size_t len) override;
  void shutdown_write() override;
  void close_notify() override;

 private:
  TlsServerEndpoint(SSL* ssl, int fd, std::string_view alpn) : ssl_(ssl), fd_(fd), alpn_(alpn) {}
  net::IoResult failed(int ret, const char* op);

  // net::TlsHandshakeHooks: stream has one server an address, whatever the name.
  bool on_server_name(SSL*, std::string_view) override { return true; }
  std::string_view alpn_protocols() const override { return alpn_; }

  SSL* ssl_;
  int fd_;
  std::string alpn_;
  bool broken_ = false;  // no close_notify after a fatal error
  std::string error_;
};

}  // namespace torii::stream
