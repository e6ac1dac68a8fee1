// One client connection: connect, TLS handshake and ALPN, then a codec
// (HTTP/1.1 or HTTP/2) over a Transport, driven by epoll edges. Closed
// connections reconnect only when handed a request, so a request that finds
// its connection gone pays for the new one in its latency, as a real client
// would. What it owns is allocated once; a request costs no allocation.
#pragma once

#include <cstdint>
#include <memory>

#include <nghttp2/nghttp2.h>

#include "load/client_connection.h"
#include "load/codec.h"
#include "load/run_context.h"
#include "load/transport.h"

namespace torii::load {

class H1Codec;
class H2Codec;

// What a connection needs from the thread that runs it.
class ConnectionHost {
 public:
  virtual int epoll_fd() const = 0;
  virtual char* read_buffer() = 0;
  virtual size_t read_buffer_size() const = 0;
  // The connection may take a request now (it had none to take before).
  virtual void ready(ClientConnection& c) = 0;
  // Same, but not before the next loop turn (after a connect that failed at once).
  virtual void ready_next_turn(ClientConnection& c) = 0;
  // Requests were submitted: write them at the end of this batch.
  virtual void flush_later(ClientConnection& c) = 0;
  // The connection's deadline() moved to `due_ns` (QUIC timers).
  virtual void deadline_at(int64_t due_ns) = 0;
  virtual void completed(int64_t from_ns, int status, int64_t now_ns) = 0;
  virtual void failed(int64_t from_ns, ErrorKind kind, const char* why) = 0;
  virtual void retry(int64_t from_ns) = 0;
  virtual Stats& stats() = 0;
  // The thread's allocator for nghttp2.
  virtual nghttp2_mem* h2_allocator() = 0;

 protected:
  ~ConnectionHost() = default;
};

class Connection final : public ClientConnection, private RequestSink {
 public:
  Connection(ConnectionHost& host, const RunContext& run);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void connect_now(int64_t now_ns) override;
  bool connecting() const override { return state_ == State::connecting || state_ == State::handshaking; }
  unsigned capacity() const override;
  void start_request(int64_t from_ns, int64_t now_ns) override;
  void flush() override;
  void on_io(uint32_t events) override;
  void check_timeout(int64_t now_ns) override;
  void abandon() override;

 private:
  enum class State : uint8_t { idle, connecting, handshaking, open };

  void begin_connect(int64_t now_ns);
  void connect_failed(ErrorKind kind, const char* why, bool at_once);
  void tcp_connected();
  void continue_handshake();
  void opened();
  void read_all();
  // Closes and reports what was outstanding (eof: the peer closed).
  void close_connection(bool eof, ErrorKind kind, const char* why);

  // RequestSink, from the codec.
  void completed(int64_t from_ns, int status) override;
  void failed(int64_t from_ns, ErrorKind kind, const char* why) override;
  void retry(int64_t from_ns) override;

  ConnectionHost& host_;
  const RunContext& run_;
  Transport transport_;
  TlsClient::SessionSlot session_;
  std::unique_ptr<H1Codec> h1_;
  std::unique_ptr<H2Codec> h2_;
  Codec* codec_ = nullptr;
  State state_ = State::idle;
  bool pending_ = false;  // a request waits for the connection to open
  int64_t pending_from_ = 0;
  int64_t pending_sent_ = 0;
  int64_t connect_started_ = 0;
  int64_t read_at_ = 0;  // when the bytes being processed were read
  static constexpr size_t kOutSize = 16 * 1024;
  std::unique_ptr<char[]> out_;
  size_t out_len_ = 0;
  size_t out_off_ = 0;
};

}  // namespace torii::load
