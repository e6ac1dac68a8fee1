#include "load/connection.h"

#include <sys/epoll.h>

#include "load/clock.h"
#include "load/h1_codec.h"
#include "load/h2_codec.h"

namespace torii::load {

Connection::Connection(ConnectionHost& host, const RunContext& run)
    : host_(host), run_(run), out_(new char[kOutSize]) {}

Connection::~Connection() = default;

unsigned Connection::capacity() const {
  switch (state_) {
    case State::idle: return pending_ || wait_turn_ ? 0 : 1;
    case State::open: return codec_->capacity();
    default: return 0;
  }
}

void Connection::connect_now(int64_t now_ns) {
  if (state_ == State::idle) begin_connect(now_ns);
}

void Connection::start_request(int64_t from_ns, int64_t now_ns) {
  if (state_ == State::open) {
    codec_->submit(from_ns, now_ns);
    host_.flush_later(*this);
    return;
  }
  // Idle: the request waits for a new connection, and its latency includes it.
  pending_ = true;
  pending_from_ = from_ns;
  pending_sent_ = now_ns;
  begin_connect(now_ns);
}

void Connection::begin_connect(int64_t now_ns) {
  connect_started_ = now_ns;
  out_len_ = out_off_ = 0;
  if (!transport_.connect(run_.address, run_.address_length)) {
    connect_failed(ErrorKind::connect, transport_.error_text(), true);
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  ev.data.ptr = static_cast<ClientConnection*>(this);
  if (epoll_ctl(host_.epoll_fd(), EPOLL_CTL_ADD, transport_.fd(), &ev) != 0) {
    connect_failed(ErrorKind::connect, "epoll_ctl failed", true);
    return;
  }
  state_ = State::connecting;
}

void Connection::connect_failed(ErrorKind kind, const char* why, bool at_once) {
  transport_.close();
  state_ = State::idle;
  ++host_.stats().connect_failures;
  if (pending_) {
    pending_ = false;
    host_.failed(pending_from_, kind, why);
  }
  if (at_once) {
    // Not again in this turn: a refused connect to a local port fails inside
    // connect(), and taking the next request at once would spin.
    wait_turn_ = true;
    host_.ready_next_turn(*this);
  } else {
    host_.ready(*this);
  }
}

void Connection::on_io(uint32_t events) {
  switch (state_) {
    case State::connecting:
      if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) tcp_connected();
      return;
    case State::handshaking:
      continue_handshake();
      return;
    case State::open:
      if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) read_all();
      if (state_ == State::open) flush();
      // Responses (or the server's SETTINGS) may have made room.
      if (state_ == State::open && codec_->capacity() > 0) host_.ready(*this);
      return;
    case State::idle:
      return;  // an event left over from a socket already closed
  }
}

void Connection::tcp_connected() {
  if (!transport_.connect_finished()) {
    connect_failed(ErrorKind::connect, transport_.error_text(), false);
    return;
  }
  if (!run_.tls) {
    opened();
    return;
  }
  if (!transport_.start_tls(run_.tls->ctx(), run_.server_name.empty() ? nullptr : run_.server_name.c_str(),
                            &session_, run_.options.tls_resume)) {
    connect_failed(ErrorKind::tls, transport_.error_text(), false);
    return;
  }
  state_ = State::handshaking;
  continue_handshake();
}

void Connection::continue_handshake() {
  switch (transport_.handshake()) {
    case Transport::Io::done: break;
    case Transport::Io::again: return;
    case Transport::Io::eof:
      connect_failed(ErrorKind::tls, "connection closed during the TLS handshake", false);
      return;
    case Transport::Io::error:
      connect_failed(ErrorKind::tls, transport_.error_text(), false);
      return;
  }
  Stats& stats = host_.stats();
  ++stats.tls_handshakes;
  if (transport_.resumed()) ++stats.tls_resumed;
  opened();
}

void Connection::opened() {
  bool h2 = false;
  switch (run_.options.protocol) {
    case Protocol::h1: break;
    case Protocol::h2:
      h2 = true;
      if (run_.tls && transport_.alpn() != "h2") {
        connect_failed(ErrorKind::tls, "the server did not choose h2 by ALPN", false);
        return;
      }
      break;
    case Protocol::automatic: h2 = run_.tls && transport_.alpn() == "h2"; break;
    case Protocol::h3:
    case Protocol::hq: break;  // QuicConnection's, never here
  }
  const Options& o = run_.options;
  RequestSink& sink = *this;
  if (h2) {
    if (!h2_) h2_ = std::make_unique<H2Codec>(run_.templates, o.streams, o.connect_per_request, sink,
                                                host_.h2_allocator());
    codec_ = h2_.get();
  } else {
    if (!h1_) h1_ = std::make_unique<H1Codec>(run_.templates, o.streams, o.connect_per_request, sink);
    codec_ = h1_.get();
  }
  if (!codec_->start()) {
    connect_failed(ErrorKind::protocol, "out of memory", false);
    return;
  }
  state_ = State::open;
  Stats& stats = host_.stats();
  ++stats.connects;
  if (h2) ++stats.connects_h2;
  if (pending_) {
    pending_ = false;
    codec_->submit(pending_from_, pending_sent_);
  }
  flush();
  if (state_ == State::open) host_.ready(*this);
}

void Connection::read_all() {
  char* buf = host_.read_buffer();
  size_t cap = host_.read_buffer_size();
  for (;;) {
    size_t n = 0;
    switch (transport_.read(buf, cap, n)) {
      case Transport::Io::done:
        break;
      case Transport::Io::again:
        return;
      case Transport::Io::eof:
        read_at_ = now_ns();  // a body delimited by the close ends now
        close_connection(true, ErrorKind::reset, "connection closed");
        return;
      case Transport::Io::error:
        close_connection(false, ErrorKind::reset, transport_.error_text());
        return;
    }
    host_.stats().bytes_received += n;
    read_at_ = now_ns();
    if (!codec_->receive(buf, n)) {
      close_connection(false, ErrorKind::protocol, "protocol error");
      return;
    }
    if (codec_->finished()) {
      close_connection(true, ErrorKind::reset, "connection closed");
      return;
    }
    // A short read from a plain socket drained it; the next bytes bring a new
    // edge. (A TLS read returns one record at most, so it goes on.)
    if (!transport_.tls() && n < cap) return;
  }
}

void Connection::flush() {
  if (state_ != State::open) return;
  for (;;) {
    if (out_off_ == out_len_) {
      out_off_ = out_len_ = 0;
      out_len_ = codec_->produce(out_.get(), kOutSize);
      if (out_len_ == 0) break;
    }
    size_t want = out_len_ - out_off_;
    size_t n = 0;
    Transport::Io io = transport_.write(out_.get() + out_off_, want, n);
    if (io == Transport::Io::error || io == Transport::Io::eof) {
      close_connection(false, ErrorKind::reset, transport_.error_text());
      return;
    }
    out_off_ += n;
    host_.stats().bytes_sent += n;
    if (io == Transport::Io::again || (n < want && !transport_.tls())) return;  // wait for EPOLLOUT
  }
  if (codec_->finished()) close_connection(true, ErrorKind::reset, "connection closed");
}

void Connection::close_connection(bool eof, ErrorKind kind, const char* why) {
  if (state_ == State::idle) return;
  State was = state_;
  state_ = State::idle;
  if (was == State::open) codec_->closed(eof, kind, why);
  transport_.close(eof);
  out_len_ = out_off_ = 0;
  host_.ready(*this);
}

void Connection::check_timeout(int64_t now_ns) {
  int64_t limit = run_.options.timeout_ns;
  switch (state_) {
    case State::connecting:
      if (now_ns - connect_started_ > limit) connect_failed(ErrorKind::connect, "connect timed out", false);
      return;
    case State::handshaking:
      if (now_ns - connect_started_ > limit) connect_failed(ErrorKind::tls, "TLS handshake timed out", false);
      return;
    case State::open:
      if (codec_->outstanding() > 0 && now_ns - codec_->oldest_sent() > limit)
        close_connection(false, ErrorKind::timeout, "no response within the timeout");
      return;
    case State::idle:
      return;
  }
}

void Connection::abandon() {
  transport_.close();
  state_ = State::idle;
  pending_ = false;
}

void Connection::completed(int64_t from_ns, int status) { host_.completed(from_ns, status, read_at_); }

void Connection::failed(int64_t from_ns, ErrorKind kind, const char* why) { host_.failed(from_ns, kind, why); }

void Connection::retry(int64_t from_ns) {
  ++host_.stats().retried;
  host_.retry(from_ns);
}

}  // namespace torii::load
