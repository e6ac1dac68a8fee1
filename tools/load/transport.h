// One client socket, plain or TLS: a non-blocking connect, the handshake,
// then bytes in and out. The connection above sees only done / again / eof /
// error, whichever the layer underneath.
#pragma once

#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cstddef>
#include <string_view>

#include "load/tls_client.h"

namespace torii::load {

class Transport {
 public:
  enum class Io : uint8_t { done, again, eof, error };

  Transport() = default;
  ~Transport() { close(); }
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Starts a non-blocking TCP connect; false when it failed at once.
  bool connect(const sockaddr_storage& address, socklen_t length);
  // Once the socket is writable: did the connect succeed?
  bool connect_finished();
  // Starts TLS over the connected socket; `slot` keeps the session to resume.
  bool start_tls(SSL_CTX* ctx, const char* server_name, TlsClient::SessionSlot* slot, bool resume);
  // Moves the handshake on: done, again (wait for the socket) or error.
  Io handshake();

  Io read(char* buf, size_t cap, size_t& n);
  Io write(const char* data, size_t len, size_t& n);
  // `clean`: the exchange ended well, so TLS says close_notify first, which
  // also keeps the session resumable (OpenSSL drops a session whose
  // connection ended without it).
  void close(bool clean = false);

  int fd() const { return fd_; }
  bool tls() const { return ssl_ != nullptr; }
  bool resumed() const { return ssl_ && SSL_session_reused(ssl_); }
  // The protocol ALPN chose ("" when none).
  std::string_view alpn() const;
  // What the last error was.
  const char* error_text() const { return error_; }

 private:
  Io fail_errno(int err);
  Io fail_tls(int ssl_error);

  int fd_ = -1;
  SSL* ssl_ = nullptr;
  char error_[160] = "";
};

}  // namespace torii::load
