#include "http2/connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "http/pipeline.h"
#include "log/access_log.h"
#include "log/error_log.h"
#include "modules/post_action/post_action.h"

namespace torii::http2 {

namespace {
constexpr size_t kReadChunk = 16 * 1024;
// Frames are collected up to this size and leave in one write: many small
// responses share a syscall (and a TLS record run), large ones stream.
constexpr size_t kWriteBatch = 64 * 1024;
constexpr int64_t kLingerMs = 2'000;  // after GOAWAY: let the client read it
constexpr int kReadsPerTurn = 16;
// A connection idle this long gives its idle memory back (shed_idle_memory);
// one between the requests of a burst does not pay a syscall each time.
constexpr int64_t kShedAfterMs = 1'000;
}  // namespace

Connection::Connection(core::Worker& worker, std::unique_ptr<net::Transport> transport,
                       const http::ConnectionInfo& info, std::shared_ptr<core::ListenBinding> binding,
                       std::string received)
    : worker_(worker),
      transport_(std::move(transport)),
      binding_(std::move(binding)),
      session_(*this, info, binding_),
      received_(std::move(received)),
      timer_(&Connection::on_timer, this) {
  send_timeout_ms_ = binding_->group->default_server->settings.send_timeout.count();
}

Connection::~Connection() { worker_.loop().cancel(timer_); }

void Connection::start() {
  // Frames of many streams interleave: none may wait for an ACK (Nagle).
  int one = 1;
  setsockopt(transport_->fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  worker_.loop().modify(transport_->fd(), this, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
  if (!session_.start()) {
    TORII_LOG(alert, "could not start an HTTP/2 session, client: %s", session_.info().remote_addr.c_str());
    close_now();
    return;
  }
  in_drive_ = true;
  if (!received_.empty() && !session_.receive(received_.data(), received_.size())) closing_ = true;
  in_drive_ = false;
  std::string().swap(received_);
  drive();  // and collects the streams that closed in the first bytes
}

void Connection::on_io(uint32_t events) {
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) readable_ = true;
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) peer_closing_ = true;
  if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) writable_ = true;
  drive();
}

void Connection::drive() {
  if (closed_) return;
  in_drive_ = true;
  struct Leave {
    Connection& c;
    ~Leave() {
      c.in_drive_ = false;
      c.session_.collect_closed();
    }
  } leave{*this};
  const uint64_t written_before = bytes_written_;
  const uint64_t read_before = bytes_read_;
  // Bounded: a handler that keeps producing cannot hold the loop forever.
  for (int round = 0;; ++round) {
    if (!read_input()) return;
    if (!write_output()) return;
    if (closing_ || !session_.service()) break;  // service() may have queued output
    if (round == 16) {
      schedule_drive();
      break;
    }
  }
  const bool wrote = bytes_written_ != written_before;
  const bool active = wrote || bytes_read_ != read_before;
  if (closed_ || lingering_) return;
  const bool flushed = out_pos_ == out_.size() && !session_.want_write();
  if (flushed && (closing_ || session_.done())) {
    start_lingering();
    return;
  }
  update_timer(wrote, active);
}

bool Connection::read_input() {
  char buf[kReadChunk];
  for (int reads = 0; readable_; ++reads) {
    if (reads == kReadsPerTurn) {
      schedule_drive();  // a fast sender gets the rest next turn, after the others
      break;
    }
    auto r = transport_->read(buf, sizeof buf);
    if (r.status == net::IoStatus::ok) {
      bytes_read_ += r.bytes;
      if (!closing_ && !session_.receive(buf, r.bytes)) closing_ = true;
      if (r.drained && !peer_closing_) readable_ = false;  // the socket is empty: wait for the next edge
      continue;
    }
    if (r.status == net::IoStatus::again) {
      if (transport_->wants_write()) writable_ = false;
      readable_ = false;
      break;
    }
    if (r.status == net::IoStatus::error && errno != ECONNRESET && !lingering_) {
      TORII_LOG(info, "recv() failed (%d: %s), client: %s", errno, strerror(errno),
                session_.info().remote_addr.c_str());
    }
    close_now();  // the client closed: streams in flight are cancelled
    return false;
  }
  return true;
}

// Half-closes and reads (and drops) what the client still sends for a
// moment, so our last frames (GOAWAY) are read rather than lost to a reset.
void Connection::start_lingering() {
  lingering_ = true;
  closing_ = true;
  transport_->shutdown_write();
  worker_.loop().arm(timer_, kLingerMs);
}

// Frames are produced into a buffer of the thread's and written from
// there; only what the socket does not take is copied into the
// connection's own out_, so an idle connection holds no output buffer.
bool Connection::write_output() {
  if (lingering_) return true;
  thread_local std::string t_batch;
  thread_local bool t_batch_busy = false;
  while (writable_) {
    const bool left_over = out_pos_ < out_.size();
    std::string local;  // only if produce() ever re-entered another connection's write
    std::string& batch = left_over ? out_ : (t_batch_busy ? local : t_batch);
    size_t pos = left_over ? out_pos_ : 0;
    if (!left_over) {
      if (!session_.has_output()) break;  // most turns: one produce() per batch, none after it
      batch.clear();
      const bool shared = &batch == &t_batch;
      if (shared) t_batch_busy = true;
      const bool ok = session_.produce(batch, kWriteBatch);
      if (shared) t_batch_busy = false;
      if (!ok) {
        close_now();
        return false;
      }
      if (batch.empty()) break;
    }
    iovec iov{batch.data() + pos, batch.size() - pos};
    auto r = transport_->writev(&iov, 1, false);
    if (r.status == net::IoStatus::ok) {
      pos += r.bytes;
      bytes_written_ += r.bytes;
    }
    if (left_over) {
      out_pos_ = pos;
      if (out_pos_ == out_.size()) {
        std::string().swap(out_);  // written: a slow reader's buffer goes back
        out_pos_ = 0;
      }
    } else if (pos < batch.size()) {
      out_.assign(batch, pos);  // the socket is full: keep the rest
      out_pos_ = 0;
    }
    if (r.status == net::IoStatus::ok) continue;
    if (r.status == net::IoStatus::again) {
      writable_ = false;
      break;
    }
    if (errno != EPIPE && errno != ECONNRESET) {
      TORII_LOG(info, "writev() failed (%d: %s) while sending to client, client: %s", errno, strerror(errno),
                session_.info().remote_addr.c_str());
    }
    close_now();
    return false;
  }
  return true;
}

void Connection::update_timer(bool wrote, bool active) {
  TimerKind kind = TimerKind::none;
  if (out_pos_ < out_.size()) {
    kind = TimerKind::send;  // the socket is full
  } else if (session_.open_streams() == 0) {
    // Still the same idle time, unless a request came and went meanwhile
    // (within one turn, so no other state was seen in between).
    const bool same_idle = (timer_kind_ == TimerKind::quiet || timer_kind_ == TimerKind::idle) &&
                           session_.requests() == requests_at_idle_;
    kind = same_idle ? timer_kind_ : TimerKind::quiet;
    if (!same_idle) timer_kind_ = TimerKind::none;  // arm it afresh
  } else if (!session_.want_write() && session_.stalled()) {
    kind = TimerKind::send;  // the client's window is shut
  }
  int64_t body_due = INT64_MAX;
  if (kind == TimerKind::none) {
    body_due = session_.body_deadline();  // a client that owes a body
    if (body_due != INT64_MAX) kind = TimerKind::body;
  }
  // keepalive_timeout counts from the connection's last activity, as
  // nginx's (a PING or a WINDOW_UPDATE while idle counts too).
  if (active && kind == timer_kind_ && (kind == TimerKind::quiet || kind == TimerKind::idle))
    idle_since_ms_ = worker_.loop().now_ms();
  // The same kind stays armed, except: the body deadline moves; a full
  // socket that took bytes starts its send_timeout again; and an idle
  // connection that was active moves its keepalive deadline.
  if (kind == timer_kind_ && kind != TimerKind::body && !(kind == TimerKind::send && wrote) &&
      !(kind == TimerKind::idle && active))
    return;
  timer_kind_ = kind;
  switch (kind) {
    case TimerKind::none:
      worker_.loop().cancel(timer_);
      break;
    case TimerKind::quiet:
      idle_since_ms_ = worker_.loop().now_ms();
      requests_at_idle_ = session_.requests();
      if (session_.idle_timeout_ms() <= kShedAfterMs) {
        timer_kind_ = TimerKind::idle;  // closes before shedding would pay
        worker_.loop().arm(timer_, std::max<int64_t>(session_.idle_timeout_ms(), 1));
      } else {
        worker_.loop().arm(timer_, kShedAfterMs);
      }
      break;
    case TimerKind::idle:
      worker_.loop().arm(timer_,
                         std::max<int64_t>(idle_since_ms_ + session_.idle_timeout_ms() - worker_.loop().now_ms(), 1));
      break;
    case TimerKind::send:
      worker_.loop().arm(timer_, send_timeout_ms_);
      break;
    case TimerKind::body:
      worker_.loop().arm(timer_, std::max<int64_t>(body_due - worker_.loop().now_ms(), 1));
      break;
  }
}

void Connection::on_timer(void* self) { static_cast<Connection*>(self)->on_timeout(); }

void Connection::on_timeout() {
  if (lingering_) {
    close_now();
    return;
  }
  if (timer_kind_ == TimerKind::send) {
    TORII_LOG(info, "client timed out (110: Connection timed out) while sending response to client, client: %s",
              session_.info().remote_addr.c_str());
    close_now();
    return;
  }
  if (timer_kind_ == TimerKind::quiet) {
    if (session_.shed_idle_memory()) transport_->release_idle_buffers();
    timer_kind_ = TimerKind::idle;  // the rest of keepalive_timeout
    worker_.loop().arm(timer_,
                       std::max<int64_t>(idle_since_ms_ + session_.idle_timeout_ms() - worker_.loop().now_ms(), 1));
    return;
  }
  if (timer_kind_ == TimerKind::body) {
    timer_kind_ = TimerKind::none;
    session_.expire_bodies(worker_.loop().now_ms());
    drive();
    return;
  }
  // Idle (keepalive_timeout): say goodbye, then close.
  timer_kind_ = TimerKind::none;
  session_.terminate(NGHTTP2_NO_ERROR);
  closing_ = true;
  drive();
}

void Connection::drain() {
  if (closed_) return;
  session_.shutdown();
  if (in_drive_) return;
  drive();
}

void Connection::close_now() {
  if (closed_) return;
  closed_ = true;
  worker_.loop().cancel(timer_);
  session_.abort_streams();
  transport_.reset();  // closes the socket, which also leaves the epoll set
  worker_.release(this);
}

// ---- SessionHost --------------------------------------------------------------

void Connection::run_request(http::Exchange& ex) { http::run_request(ex); }

void Connection::log_request(http::Exchange& ex) {
  worker_.access_log().log(ex);
  post_action::after_response(ex);
}

// Sink calls made outside drive() (an asynchronous handler) run the
// session at the end of the turn, never inside the handler's own call.
void Connection::wake() {
  if (!in_drive_) schedule_drive();
}

void Connection::schedule_drive() {
  if (drive_scheduled_ || closed_) return;
  drive_scheduled_ = true;
  std::weak_ptr<char> alive = alive_;
  worker_.loop().defer([this, alive] {
    if (alive.expired()) return;
    drive_scheduled_ = false;
    drive();
  });
}

int64_t Connection::now_ms() { return worker_.loop().now_ms(); }

http::WorkerServices& Connection::services() { return worker_.services(); }

}  // namespace torii::http2
