// One HTTP/3 client connection: its own connected UDP socket, an
// H3Session (QUIC + TLS + HTTP/3, no I/O of its own) and the I/O around
// it: datagrams read until the socket is empty, packets sent a send
// quantum at a time and then paced (ngtcp2 says when the next burst may
// leave), the session's timer (loss recovery, acknowledgements, pacing,
// idle) kept as the deadline the worker's loop fires. Like the TCP
// Connection, a closed connection reconnects only when handed a request,
// so that request's latency includes the new handshake.
#pragma once

#include <sys/socket.h>

#include <cstdint>

#include "load/connection.h"
#include "load/h3_session.h"

namespace torii::load {

class QuicConnection final : public ClientConnection, private RequestSink {
 public:
  QuicConnection(ConnectionHost& host, const RunContext& run);
  ~QuicConnection() override;
  QuicConnection(const QuicConnection&) = delete;
  QuicConnection& operator=(const QuicConnection&) = delete;

  void connect_now(int64_t now_ns) override;
  bool connecting() const override { return state_ == State::handshaking; }
  unsigned capacity() const override;
  void start_request(int64_t from_ns, int64_t now_ns) override;
  void flush() override;
  void on_io(uint32_t events) override;
  void check_timeout(int64_t now_ns) override;
  void abandon() override;
  int64_t deadline() const override { return state_ == State::idle ? INT64_MAX : deadline_; }
  void on_deadline(int64_t now_ns) override;

 private:
  enum class State : uint8_t { idle, handshaking, open };
  // A UDP datagram's largest payload; ngtcp2 writes at most its
  // max_tx_udp_payload_size (1452 by default) per packet.
  static constexpr size_t kMaxPacket = 1500;
  // The socket's receive buffer (the kernel caps it at net.core.rmem_max).
  static constexpr int kReceiveBuffer = 4 * 1024 * 1024;
  // Datagrams read per recvmmsg, each in a slot of the largest size our
  // transport parameters allow the server (H3Session::kMaxDatagram).
  static constexpr size_t kReadBatch = 16;
  static constexpr size_t kMaxDatagram = H3Session::kMaxDatagram;

  void begin_connect(int64_t now_ns);
  void connect_failed(ErrorKind kind, const char* why, bool at_once);
  void opened();
  void read_all();
  // Sends the packet in pkt_. False: the socket is full (wait for
  // EPOLLOUT) or failed (the connection is closed).
  bool send_packet();
  void socket_error(int err);
  void session_failed();
  // Closes and reports what was outstanding. `say_close`: tell the server
  // (CONNECTION_CLOSE) first.
  void close_connection(bool say_close, ErrorKind kind, const char* why);
  void close_socket();
  void update_deadline();

  // RequestSink, from the session.
  void completed(int64_t from_ns, int status) override;
  void failed(int64_t from_ns, ErrorKind kind, const char* why) override;
  void retry(int64_t from_ns) override;

  ConnectionHost& host_;
  const RunContext& run_;
  H3Session session_;
  int fd_ = -1;
  State state_ = State::idle;
  bool pending_ = false;  // a request waits for the connection to open
  int64_t pending_from_ = 0;
  int64_t pending_sent_ = 0;
  int64_t connect_started_ = 0;
  int64_t read_at_ = 0;  // when the datagram being processed was read
  int64_t deadline_ = INT64_MAX;
  sockaddr_storage local_{};
  socklen_t local_len_ = 0;
  size_t pkt_len_ = 0;  // a packet the full socket refused, sent first
  uint8_t pkt_[kMaxPacket];
  char why_[120] = "";
};

}  // namespace torii::load
