// One side of a stream session as its pipes see it: bytes in and out of a
// socket, plain or through TLS (the client's `listen ... ssl`, the
// upstream's `proxy_ssl`). None owns its socket: the session closes it.
#pragma once

#include <cstddef>
#include <memory>

#include "net/tls_client.h"
#include "net/transport.h"

namespace torii::stream {

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // `again`: wait for the socket's next event; `eof`: the peer ended.
  virtual net::IoResult read(char* buf, size_t len) = 0;
  virtual net::IoResult write(const char* data, size_t len) = 0;
  // Passes our end on (TLS: close_notify first), the other way stays open.
  virtual void shutdown_write() = 0;
  // At the session's end: a TLS close_notify, one try, never waiting.
  virtual void close_notify() {}
};

class PlainEndpoint final : public Endpoint {
 public:
  explicit PlainEndpoint(int fd) : fd_(fd) {}
  net::IoResult read(char* buf, size_t len) override;
  net::IoResult write(const char* data, size_t len) override;
  void shutdown_write() override;

 private:
  int fd_;
};

// proxy_ssl: the http proxy's TLS client, once its handshake is done.
class UpstreamTlsEndpoint final : public Endpoint {
 public:
  UpstreamTlsEndpoint(std::unique_ptr<net::TlsClient> tls, int fd) : tls_(std::move(tls)), fd_(fd) {}
  net::IoResult read(char* buf, size_t len) override { return tls_->read(buf, len); }
  net::IoResult write(const char* data, size_t len) override { return tls_->write(data, len); }
  void shutdown_write() override;
  void close_notify() override { tls_->close_notify(); }

 private:
  std::unique_ptr<net::TlsClient> tls_;
  int fd_;
};

}  // namespace torii::stream
