// TLS to an upstream over a connected non-blocking socket (OpenSSL client
// side). The proxy drives the handshake from its event handler like a
// read: `again` with wants_write() says which readiness it waits for.
// The connection does not own the descriptor: whoever holds the socket
// (a proxy session, then the keep-alive pool) closes it after this.
//
// Resumption: each connection of a (context, server) pair shares one
// TlsSessionSlot, kept per worker with the upstream group. A new
// connection offers the slot's session; every session the server issues
// (TLS 1.2 at the handshake's end, TLS 1.3 tickets after it) replaces it.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <string_view>

#include "net/transport.h"

namespace torii::net {

class TlsSessionSlot {
 public:
  TlsSessionSlot() = default;
  ~TlsSessionSlot() { clear(); }
  TlsSessionSlot(const TlsSessionSlot&) = delete;
  TlsSessionSlot& operator=(const TlsSessionSlot&) = delete;

  void store(SSL_SESSION* s);  // takes ownership
  SSL_SESSION* get() const { return session_; }
  void clear();

 private:
  SSL_SESSION* session_ = nullptr;
};

// The name a client sends as SNI and checks the certificate against, from
// proxy_ssl_name or the proxy_pass host: a port is not part of it, and an
// IPv6 literal loses its brackets ("[::1]:8443" -> "::1").
std::string tls_server_name(std::string_view name);

class TlsClient {
 public:
  // `server_name`: sent as SNI when not empty. `slot` (may be null): the
  // session to offer and where new ones go. Null on failure, with `error`.
  // `alpn`: the protocols to offer, in wire format (empty: no ALPN).
  static std::unique_ptr<TlsClient> start(SSL_CTX* ctx, int fd, const std::string& server_name,
                                          std::shared_ptr<TlsSessionSlot> slot, std::string& error,
                                          std::string_view alpn = {});
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  IoResult handshake();
  // After the handshake, with proxy_ssl_verify on: empty when the chain
  // and `name` check out, else nginx's words for the failure.
  std::string verify(std::string_view name) const;
  bool session_reused() const { return SSL_session_reused(ssl_) == 1; }
  SSL_CTX* context() const { return SSL_get_SSL_CTX(ssl_); }
  // The failure behind the last `error` result ("SSL_do_handshake() failed (SSL: ...)").
  const std::string& error() const { return error_; }

  IoResult read(char* buf, size_t len);
  IoResult write(const char* data, size_t len);
  bool wants_write() const { return want_write_; }
  // Bytes decrypted and not read yet (an edge-triggered reader must take them).
  bool pending() const { return SSL_pending(ssl_) > 0; }

  // A clean end: close_notify, without waiting for the server's. Else the
  // connection is dropped as it is (after an error or a timeout).
  void close_notify();

  // The context's new-session callback (upstream_tls_context.cc installs it).
  static int on_new_session(SSL* ssl, SSL_SESSION* session);

 private:
  TlsClient(SSL* ssl, std::shared_ptr<TlsSessionSlot> slot) : ssl_(ssl), slot_(std::move(slot)) {}
  IoResult failed(int ret, const char* op);

  SSL* ssl_;
  std::shared_ptr<TlsSessionSlot> slot_;
  bool want_write_ = false;
  bool broken_ = false;  // no close_notify after a fatal error
  std::string error_;
};

}  // namespace torii::net
