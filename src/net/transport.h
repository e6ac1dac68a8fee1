// The byte stream under a codec: plain TCP or TLS. Codecs and sessions see
// plain bytes through this small interface; the TLS details (handshake,
// records, want-read/want-write) stay behind it.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace torii::net {

class TlsDetails;

enum class IoStatus : uint8_t {
  ok,     // `bytes` moved (for handshake: finished)
  again,  // would block: wait for readiness (see wants_write)
  eof,    // the peer closed (read side)
  error,  // errno (or the TLS error) says why; the connection is done
};

struct IoResult {
  IoStatus status = IoStatus::ok;
  size_t bytes = 0;
  // read() only: the socket had nothing more to give, so reading again
  // would only return `again` (an edge-triggered reader can stop here and
  // save that syscall). False when unsure.
  bool drained = false;
};

// TLS facts for $ssl_* variables and logs; empty strings on plain TCP.
struct TlsInfo {
  std::string_view protocol;     // "TLSv1.3"
  std::string_view cipher;       // "TLS_AES_128_GCM_SHA256"
  std::string_view server_name;  // SNI
  bool session_reused = false;
  bool early_data = false;  // the first request came in TLS 1.3 early data (0-RTT)
  std::shared_ptr<const struct ClientCertInfo> client_cert;  // null: no certificate asked for
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int fd() const = 0;
  // Drives the TLS handshake; plain TCP is always done.
  virtual IoResult handshake() { return {IoStatus::ok, 0}; }
  virtual IoResult read(char* buf, size_t len) = 0;
  // `more`: more data follows at once (lets TCP fill segments).
  virtual IoResult writev(const iovec* iov, int count, bool more) = 0;
  // Plain TCP can hand file ranges to the kernel; TLS must read them.
  virtual bool can_sendfile() const { return false; }
  virtual IoResult sendfile(int file_fd, int64_t offset, size_t len) { return {IoStatus::error, 0}; }
  // After `again`: true if the operation waits for writability (TLS may
  // need to write while reading and the other way round).
  virtual bool wants_write() const { return false; }
  // Ends our side of the stream (TCP FIN, TLS close_notify first).
  virtual void shutdown_write() = 0;

  virtual bool is_tls() const { return false; }
  virtual std::string_view alpn() const { return {}; }  // negotiated protocol, e.g. "h2"
  virtual TlsInfo tls_info() const { return {}; }
  virtual const TlsDetails* tls_details() const { return nullptr; }  // for the seldom-read $ssl_* variables
  // A TLS port that received plain HTTP: the transport now passes bytes
  // through unencrypted so the connection can answer with a 400 page.
  virtual bool plain_http() const { return false; }
  // The connection has been quiet for a while: buffers kept between
  // reads and writes (TLS records) go back until the next byte comes.
  virtual void release_idle_buffers() {}
};

// Plain TCP on a non-blocking socket. Owns the descriptor.
class PlainTransport final : public Transport {
 public:
  explicit PlainTransport(int fd) : fd_(fd) {}
  ~PlainTransport() override;
  PlainTransport(const PlainTransport&) = delete;
  PlainTransport& operator=(const PlainTransport&) = delete;

  int fd() const override { return fd_; }
  IoResult read(char* buf, size_t len) override;
  IoResult writev(const iovec* iov, int count, bool more) override;
  bool can_sendfile() const override { return true; }
  IoResult sendfile(int file_fd, int64_t offset, size_t len) override;
  void shutdown_write() override;

 private:
  int fd_;
};

}  // namespace torii::net
