// TLS over a non-blocking TCP socket (OpenSSL). The connection above sees
// plain bytes: handshake() is driven like a read, and `again` with
// wants_write() says which readiness it waits for. The server (and so the
// certificate and ALPN list) is picked by SNI from the listen group. A
// client that sends plain HTTP is detected before the handshake and the
// transport passes its bytes through, so the connection can answer with
// nginx's 400 page. OpenSSL reaches the socket through our own BIO: the
// records of one write (small at the start of a burst, one TCP segment;
// ssl_buffer_size after) are sealed together and leave in one send(); file
// ranges are read 64 KB at a time.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "net/tls_context.h"
#include "net/tls_details.h"
#include "net/transport.h"

namespace torii::net {

class TlsTransport final : public Transport, private TlsHandshakeHooks, private TlsDetails {
 public:
  // A record sealed in a write: where its ciphertext ends, and how many of
  // the caller's plaintext bytes it carries.
  struct Sealed {
    size_t end;
    size_t plain;
  };

  // Owns `fd`. `config` keeps the group, the servers and their contexts alive.
  TlsTransport(int fd, std::shared_ptr<const config::Config> config, const config::ListenGroup& group);
  ~TlsTransport() override;
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  int fd() const override { return fd_; }
  IoResult handshake() override;
  IoResult read(char* buf, size_t len) override;
  // With `more`, a tail shorter than a record is held (and counted as
  // written) to share a record with the next call's bytes: the caller
  // must make that call (OutputQueue passes `more` only before a file).
  IoResult writev(const iovec* iov, int count, bool more) override;
  // File ranges are read into the record buffer: no per-response copy.
  bool can_sendfile() const override { return phase_ != Phase::plain; }
  IoResult sendfile(int file_fd, int64_t offset, size_t len) override;
  bool wants_write() const override { return want_write_; }
  void shutdown_write() override;

  bool is_tls() const override { return phase_ != Phase::plain; }
  std::string_view alpn() const override;
  TlsInfo tls_info() const override;
  const TlsDetails* tls_details() const override { return phase_ == Phase::done ? this : nullptr; }
  bool plain_http() const override { return phase_ == Phase::plain; }
  void release_idle_buffers() override;
  // How many connections of this thread gave their record buffers back
  // since the last call (the worker trims the heap after a crowd of them).
  static size_t take_released_buffers();

  // The server SNI chose (the listen group's default without SNI).
  const config::Server& server() const { return *server_; }

  // Handshakes that failed, all workers together (for logs and benchmarks).
  static uint64_t failed_handshakes() { return failed_.load(std::memory_order_relaxed); }

 private:
  enum class Phase : uint8_t { detect, early_data, handshake, done, plain, failed };

  // TlsDetails
  bool append_protocol(std::string& out) const override;
  bool append_cipher(std::string& out) const override;
  bool append_session_id(std::string& out) const override { return append_openssl_session_id(ssl_, out); }
  bool append_curve(std::string& out) const override { return append_openssl_curve(ssl_, out); }
  bool append_curves(std::string& out) const override { return append_openssl_curves(ssl_, out); }
  bool append_ciphers(std::string& out) const override { return append_openssl_ciphers(ssl_, out); }
  bool append_alpn(std::string& out) const override;

  // TlsHandshakeHooks
  bool on_server_name(SSL* ssl, std::string_view name) override;
  std::string_view alpn_protocols() const override;

  // The socket BIO (see the .cc).
  static BIO_METHOD* socket_method();
  static int bio_read(BIO* bio, char* buf, int len);
  static int bio_write(BIO* bio, const char* data, int len);
  static long bio_ctrl(BIO* bio, int cmd, long num, void* ptr);

  IoResult io_error(int ret, const char* op);
  IoResult handshake_failed(const char* op, const std::string& why);
  // The next record's size: one TCP segment at the start of a burst, then
  // ssl_buffer_size.
  size_t record_size() const;
  void note_write();
  // Seals `len` bytes as records and sends them in one go; the first
  // `held` bytes were reported to the caller when they were held back.
  // Returns the caller's bytes whose records went out; the rest waits in
  // pending_.
  IoResult seal_and_send(const char* data, size_t len, size_t held);
  struct Flush {
    size_t taken = 0;  // the caller's bytes whose records are now out
    bool done = false;
    bool error = false;
  };
  Flush flush_pending();

  int fd_;
  SSL* ssl_ = nullptr;
  std::shared_ptr<const config::Config> config_;
  const config::ListenGroup& group_;
  const config::Server* server_;
  Phase phase_ = Phase::detect;
  bool want_write_ = false;
  bool peer_closed_ = false;
  bool fatal_ = false;
  bool socket_empty_ = false;  // the last recv() got less than it asked for
  bool early_data_ = false;    // the handshake accepted early data
  std::string server_name_;   // SNI, lower-case
  std::string early_;         // early data read during the handshake, not yet delivered
  size_t early_pos_ = 0;
  std::string held_;          // acknowledged to the caller, not yet in a record (writev `more`)
  bool gathering_ = false;    // the BIO adds what OpenSSL writes to t_gather
  // Sealed records the socket did not take yet. Their plaintext was not
  // reported: the caller offers it again and it is skipped, not resealed.
  std::string pending_;
  size_t pending_sent_ = 0;
  // `end` relative to pending_; those before pending_first_ went out. A
  // vector (a deque allocates on construction: 600 bytes per connection).
  std::vector<Sealed> pending_records_;
  size_t pending_first_ = 0;
  size_t buffer_size_;        // ssl_buffer_size
  unsigned burst_records_ = 0;
  int64_t last_write_ms_ = 0;

  static std::atomic<uint64_t> failed_;
};

}  // namespace torii::net
