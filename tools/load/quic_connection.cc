#include "load/quic_connection.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "load/clock.h"

namespace torii::load {

QuicConnection::QuicConnection(ConnectionHost& host, const RunContext& run)
    : host_(host), run_(run), session_(run.templates, run.options.streams, run.options.connect_per_request,
               run.options.protocol == Protocol::hq, run.options.save_dir, *this) {}

QuicConnection::~QuicConnection() { abandon(); }

unsigned QuicConnection::capacity() const {
  switch (state_) {
    case State::idle: return pending_ || wait_turn_ ? 0 : 1;
    case State::open: return session_.capacity();
    default: return 0;
  }
}

void QuicConnection::connect_now(int64_t now_ns) {
  if (state_ == State::idle) begin_connect(now_ns);
}

void QuicConnection::start_request(int64_t from_ns, int64_t now_ns) {
  if (state_ == State::open) {
    session_.submit(from_ns, now_ns);
    host_.flush_later(*this);
    return;
  }
  // Idle: the request waits for a new connection, and its latency includes it.
  pending_ = true;
  pending_from_ = from_ns;
  pending_sent_ = now_ns;
  begin_connect(now_ns);
}

void QuicConnection::begin_connect(int64_t now_ns) {
  connect_started_ = now_ns;
  pkt_len_ = 0;
  const auto* remote = reinterpret_cast<const sockaddr*>(&run_.address);
  fd_ = socket(run_.address.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0 || ::connect(fd_, remote, run_.address_length) != 0) {
    std::snprintf(why_, sizeof why_, "UDP socket: %s", std::strerror(errno));
    connect_failed(ErrorKind::connect, why_, true);
    return;
  }
  // A server that does not pace sends a window's worth of packets at once
  // (8 streams of 20 KB is 140 datagrams); the default receive buffer holds
  // about 90 of them, and what overflows is lost and recovered by timers,
  // which would show as the server's latency.
  int rcvbuf = kReceiveBuffer;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  local_len_ = sizeof local_;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&local_), &local_len_) != 0) {
    std::snprintf(why_, sizeof why_, "getsockname: %s", std::strerror(errno));
    connect_failed(ErrorKind::connect, why_, true);
    return;
  }
  if (!session_.start(reinterpret_cast<const sockaddr*>(&local_), local_len_, remote, run_.address_length,
                      run_.server_name.empty() ? nullptr : run_.server_name.c_str(), run_.quic->credentials(),
                      now_ns)) {
    connect_failed(session_.error_kind(), session_.error(), true);
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLET;
  ev.data.ptr = static_cast<ClientConnection*>(this);
  if (epoll_ctl(host_.epoll_fd(), EPOLL_CTL_ADD, fd_, &ev) != 0) {
    connect_failed(ErrorKind::connect, "epoll_ctl failed", true);
    return;
  }
  state_ = State::handshaking;
  flush();  // the client's Initial
}

void QuicConnection::connect_failed(ErrorKind kind, const char* why, bool at_once) {
  session_.discard();
  close_socket();
  state_ = State::idle;
  ++host_.stats().connect_failures;
  if (pending_) {
    pending_ = false;
    host_.failed(pending_from_, kind, why);
  }
  if (at_once) {
    // Not again in this turn, or a connect that fails at once would spin.
    wait_turn_ = true;
    host_.ready_next_turn(*this);
  } else {
    host_.ready(*this);
  }
}

void QuicConnection::opened() {
  state_ = State::open;
  Stats& stats = host_.stats();
  ++stats.connects;
  ++stats.connects_h3;
  ++stats.tls_handshakes;
  if (pending_) {
    pending_ = false;
    session_.submit(pending_from_, pending_sent_);
  }
}

void QuicConnection::on_io(uint32_t events) {
  if (state_ == State::idle) return;  // an event left over from a socket already closed
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) read_all();
  if (state_ == State::idle) return;
  flush();
  // Responses (or new stream credit) may have made room.
  if (state_ == State::open && session_.capacity() > 0) host_.ready(*this);
}

// Datagrams come a batch per system call (recvmmsg): a 20 KB response is
// some 15 of them, and on a virtual machine each call is dear.
void QuicConnection::read_all() {
  auto* buf = reinterpret_cast<uint8_t*>(host_.read_buffer());
  const size_t slots = std::min(kReadBatch, host_.read_buffer_size() / kMaxDatagram);
  iovec iov[kReadBatch];
  mmsghdr msgs[kReadBatch];
  for (;;) {
    for (size_t i = 0; i < slots; ++i) {
      iov[i] = {buf + i * kMaxDatagram, kMaxDatagram};
      msgs[i] = mmsghdr{};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int n = recvmmsg(fd_, msgs, unsigned(slots), 0, nullptr);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      socket_error(errno);
      return;
    }
    read_at_ = now_ns();
    for (int i = 0; i < n; ++i) {
      if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) continue;  // larger than we allow: not a packet of ours
      if (!session_.receive(buf + size_t(i) * kMaxDatagram, msgs[i].msg_len, read_at_)) {
        session_failed();
        return;
      }
      if (state_ == State::handshaking && session_.ready()) opened();
    }
    // Fewer than asked for: the socket is empty, and the next datagram
    // brings a new edge.
    if (size_t(n) < slots) return;
  }
}

void QuicConnection::flush() {
  if (state_ == State::idle) return;
  if (pkt_len_ > 0 && !send_packet()) return;
  const int64_t now = now_ns();
  // One send quantum, then ngtcp2's pacing decides when the next may go
  // (the deadline the worker fires).
  const size_t burst = std::max<size_t>(1, session_.send_quantum() / std::max<size_t>(1, session_.max_packet_size()));
  for (size_t sent = 0; sent < burst; ++sent) {
    const ssize_t n = session_.produce(pkt_, sizeof pkt_, now);
    if (n < 0) {
      session_failed();
      return;
    }
    if (n == 0) break;
    pkt_len_ = size_t(n);
    if (!send_packet()) {
      if (state_ == State::idle) return;
      break;  // the socket is full: EPOLLOUT resumes
    }
  }
  session_.burst_sent(now);
  if (state_ == State::open && session_.finished()) {
    // GOAWAY (or --connect-per-request) and nothing in flight: done here.
    close_connection(true, ErrorKind::reset, "connection closed");
    return;
  }
  update_deadline();
}

bool QuicConnection::send_packet() {
  for (;;) {
    const ssize_t n = send(fd_, pkt_, pkt_len_, 0);
    if (n >= 0) {
      pkt_len_ = 0;
      return true;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) return false;
    pkt_len_ = 0;
    socket_error(errno);
    return false;
  }
}

void QuicConnection::socket_error(int err) {
  // On a connected UDP socket, ECONNREFUSED is the ICMP port unreachable
  // that a datagram to a closed port brought back: no server (any more).
  if (err == ECONNREFUSED) {
    std::snprintf(why_, sizeof why_, "connection refused (no QUIC server on the port)");
  } else {
    std::snprintf(why_, sizeof why_, "UDP: %s", std::strerror(err));
  }
  if (state_ == State::handshaking) {
    connect_failed(ErrorKind::connect, why_, false);
  } else {
    close_connection(false, ErrorKind::reset, why_);
  }
}

void QuicConnection::session_failed() {
  // The session's text stays until its next start.
  const char* why = session_.error();
  if (state_ == State::handshaking) {
    connect_failed(session_.error_kind(), why, false);
  } else if (session_.clean()) {
    // The server closed with no error (after a GOAWAY, or idle): what was
    // still in flight did not get its response.
    close_connection(false, ErrorKind::reset, "connection closed before the response was complete");
  } else {
    close_connection(false, session_.error_kind(), why);
  }
}

void QuicConnection::on_deadline(int64_t now_ns) {
  if (state_ == State::idle) return;
  if (!session_.handle_expiry(now_ns)) {
    session_failed();
    return;
  }
  flush();
}

void QuicConnection::update_deadline() {
  deadline_ = session_.expiry();
  host_.deadline_at(deadline_);
}

void QuicConnection::close_connection(bool say_close, ErrorKind kind, const char* why) {
  if (state_ == State::idle) return;
  state_ = State::idle;
  if (say_close) {
    // So the server forgets the connection now rather than at its idle timeout.
    if (size_t n = session_.write_close(pkt_, sizeof pkt_, now_ns()); n > 0) {
      [[maybe_unused]] ssize_t rv = send(fd_, pkt_, n, 0);
    }
  }
  session_.closed(kind, why);
  close_socket();
  host_.ready(*this);
}

void QuicConnection::close_socket() {
  if (fd_ < 0) return;
  Stats& stats = host_.stats();
  stats.bytes_received += session_.stream_bytes_received();
  stats.bytes_sent += session_.stream_bytes_sent();
  close(fd_);  // leaves the epoll set with it
  fd_ = -1;
  pkt_len_ = 0;
  deadline_ = INT64_MAX;
}

void QuicConnection::check_timeout(int64_t now_ns) {
  const int64_t limit = run_.options.timeout_ns;
  switch (state_) {
    case State::handshaking:
      if (now_ns - connect_started_ > limit) connect_failed(ErrorKind::tls, "QUIC handshake timed out", false);
      return;
    case State::open:
      if (session_.outstanding() > 0 && now_ns - session_.oldest_sent() > limit)
        close_connection(true, ErrorKind::timeout, "no response within the timeout");
      return;
    case State::idle:
      return;
  }
}

void QuicConnection::abandon() {
  if (state_ == State::open) {
    if (size_t n = session_.write_close(pkt_, sizeof pkt_, now_ns()); n > 0) {
      [[maybe_unused]] ssize_t rv = send(fd_, pkt_, n, 0);
    }
  }
  session_.discard();
  close_socket();
  state_ = State::idle;
  pending_ = false;
}

void QuicConnection::completed(int64_t from_ns, int status) { host_.completed(from_ns, status, read_at_); }

void QuicConnection::failed(int64_t from_ns, ErrorKind kind, const char* why) { host_.failed(from_ns, kind, why); }

void QuicConnection::retry(int64_t from_ns) {
  ++host_.stats().retried;
  host_.retry(from_ns);
}

}  // namespace torii::load
