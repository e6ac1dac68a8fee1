#include "http3/connection.h"

#include <algorithm>
#include <chrono>

#include "core/worker.h"
#include "http/pipeline.h"
#include "http3/endpoint.h"
#include "log/access_log.h"
#include "modules/metrics/worker_metrics.h"
#include "log/error_log.h"
#include "modules/post_action/post_action.h"

namespace torii::http3 {

namespace {

constexpr int kBatchesPerDrive = 16;  // then the loop turns; the rest goes at its end
constexpr int64_t kMinCloseWaitMs = 100;

int64_t mono_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Connection::Connection(Endpoint& endpoint, core::Worker& worker, const http::ConnectionInfo& info,
                       std::shared_ptr<core::ListenBinding> binding)
    : endpoint_(endpoint),
      worker_(worker),
      binding_(std::move(binding)),
      session_(*this, info, binding_),
      timer_(&Connection::on_timer, this),
      goaway_timer_(&Connection::on_goaway_timer, this) {}

Connection::~Connection() {
  worker_.loop().cancel(timer_);
  worker_.loop().cancel(goaway_timer_);
}

bool Connection::start(const SessionStart& s) { return session_.start(s, mono_ns()); }

void Connection::on_datagram(const ngtcp2_path& path, const ngtcp2_pkt_info& pi, const uint8_t* data, size_t len) {
  switch (state_) {
    case State::closed:
    case State::draining:
      return;
    case State::closing:
      // RFC 9000 10.2.1: answer what still arrives with the same close.
      if (!session_.close_packet().empty()) {
        endpoint_.send(path, reinterpret_cast<const uint8_t*>(session_.close_packet().data()),
                       session_.close_packet().size(), 0);
      }
      return;
    case State::active:
      break;
  }
  in_drive_ = true;
  const Session::Status st = session_.receive(path, pi, data, len, mono_ns());
  in_drive_ = false;
  if (st != Session::Status::ok) {
    handle(st);
    return;
  }
  // Sent at the end of the loop turn, not now: a client's datagrams often
  // come several to a read (an acknowledgement, then the next request),
  // and driving after each sent a packet with only the ACK for the first
  // before the response to the second, which carries that ACK as well.
  schedule_drive();
}

void Connection::handle(Session::Status st) {
  switch (st) {
    case Session::Status::ok:
      return;
    case Session::Status::draining:
      enter_draining();
      return;
    case Session::Status::closing:
      enter_closing();
      return;
    case Session::Status::drop:
      close_now();
      return;
  }
}

void Connection::drive() {
  if (state_ != State::active) return;
  in_drive_ = true;
  struct Leave {
    Connection& c;
    ~Leave() {
      c.in_drive_ = false;
      c.session_.collect_closed();
    }
  } leave{*this};
  if (!flush_pending()) {
    update_timer();
    return;  // the socket is full: on_writable resumes
  }
  for (int round = 0;; ++round) {
    if (round == kBatchesPerDrive) {
      schedule_drive();
      break;
    }
    const size_t quantum = std::max<size_t>(session_.send_quantum(), session_.max_packet_size());
    const size_t max_packets = std::max<size_t>(1, quantum / std::max<size_t>(1, session_.max_packet_size()));
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    size_t segment = 0;
    Session::Status st = Session::Status::ok;
    uint8_t* buf = endpoint_.tx_buffer();
    const size_t n = session_.produce(buf, endpoint_.tx_capacity(), max_packets, ps, segment, mono_ns(), st);
    if (n > 0 && !send_batch(ps.path, buf, n, segment)) {
      update_timer();
      return;
    }
    size_t off = 0, len = 0;
    ngtcp2_path_storage cps;
    ngtcp2_path_storage_zero(&cps);
    if (session_.take_carry(off, len, cps) && !send_batch(cps.path, buf + off, len, 0)) {
      update_timer();
      return;
    }
    if (st != Session::Status::ok) {
      handle(st);
      return;
    }
    if (n == 0 && len == 0) {
      // Nothing to send: run what waits outside the libraries (bodies,
      // drain callbacks); it may queue output for another round.
      if (!session_.service()) break;
    }
  }
  if (session_.going_away() && session_.open_streams() == 0 && (draining_requested_ || goaway_final_)) {
    // Graceful stop done (or keepalive_requests reached): every request answered.
    session_.close_gracefully(mono_ns());
    enter_closing();
    return;
  }
  if (session_.going_away() && !goaway_final_ && !goaway_timer_.armed()) {
    // The final GOAWAY a couple of round trips after the notice (RFC 9114 5.2).
    worker_.loop().arm(goaway_timer_, std::max<int64_t>(kMinCloseWaitMs, 2 * session_.pto_ns() / 1'000'000));
  }
  update_timer();
}

bool Connection::send_batch(const ngtcp2_path& path, const uint8_t* data, size_t len, size_t segment) {
  const ssize_t n = endpoint_.send(path, data, len, segment);
  if (n < 0) return true;  // an error other than a full socket: the packets count as lost
  if (size_t(n) == len) return true;
  // The socket is full: keep the rest (ngtcp2 counts it as sent) until it drains.
  pending_.assign(reinterpret_cast<const char*>(data) + n, len - size_t(n));
  pending_segment_ = segment;
  ngtcp2_path_storage_zero(&pending_path_);
  ngtcp2_path_copy(&pending_path_.path, &path);
  endpoint_.wait_writable(this);
  return false;
}

bool Connection::flush_pending() {
  if (pending_.empty()) return true;
  const ssize_t n = endpoint_.send(pending_path_.path, reinterpret_cast<const uint8_t*>(pending_.data()),
                                   pending_.size(), pending_segment_);
  if (n < 0 || size_t(n) == pending_.size()) {
    pending_.clear();
    return true;
  }
  pending_.erase(0, size_t(n));
  endpoint_.wait_writable(this);
  return false;
}

void Connection::on_writable() { drive(); }

void Connection::update_timer() {
  if (state_ != State::active) return;
  const int64_t expiry = session_.expiry_ns();
  int64_t delay_ms = INT64_MAX;
  if (expiry != INT64_MAX && expiry >= 0) {
    const int64_t delay_ns = expiry - mono_ns();
    delay_ms = delay_ns <= 0 ? 0 : (delay_ns + 999'999) / 1'000'000;
  }
  // The requests' timeouts and keepalive_timeout may be due sooner.
  if (const int64_t due = session_.next_deadline(); due != INT64_MAX)
    delay_ms = std::min(delay_ms, std::max<int64_t>(due - worker_.loop().now_ms(), 0));
  if (delay_ms == INT64_MAX) {
    worker_.loop().cancel(timer_);
    return;
  }
  worker_.loop().arm(timer_, delay_ms);
}

void Connection::on_timer(void* self) {
  auto* c = static_cast<Connection*>(self);
  if (c->state_ == State::closing || c->state_ == State::draining) {
    c->close_now();  // the closing or draining period is over
    return;
  }
  if (c->session_.expire_deadlines(c->worker_.loop().now_ms())) {
    // keepalive_timeout with no request open: CONNECTION_CLOSE(H3_NO_ERROR).
    c->session_.close_gracefully(mono_ns());
    c->enter_closing();
    return;
  }
  const Session::Status st = c->session_.handle_expiry(mono_ns());
  if (st != Session::Status::ok) {
    c->handle(st);
    return;
  }
  c->drive();
}

void Connection::on_goaway_timer(void* self) {
  auto* c = static_cast<Connection*>(self);
  if (c->state_ != State::active) return;
  c->session_.finish_shutdown();
  c->goaway_final_ = true;
  c->drive();
}

void Connection::enter_closing() {
  if (state_ == State::closed) return;
  state_ = State::closing;
  session_.abort_streams();
  if (!session_.close_packet().empty() && session_.path()) {
    endpoint_.send(*session_.path(), reinterpret_cast<const uint8_t*>(session_.close_packet().data()),
                   session_.close_packet().size(), 0);
  }
  worker_.loop().cancel(goaway_timer_);
  worker_.loop().arm(timer_, std::max<int64_t>(kMinCloseWaitMs, 3 * session_.pto_ns() / 1'000'000));
}

void Connection::enter_draining() {
  if (state_ == State::closed) return;
  state_ = State::draining;
  session_.abort_streams();
  worker_.loop().cancel(goaway_timer_);
  worker_.loop().arm(timer_, std::max<int64_t>(kMinCloseWaitMs, 3 * session_.pto_ns() / 1'000'000));
}

void Connection::drain() {
  if (state_ != State::active || draining_requested_) return;
  draining_requested_ = true;
  if (!session_.handshake_done()) {
    close_now();  // nothing was asked yet
    return;
  }
  session_.shutdown();
  if (!in_drive_) drive();  // arms the final GOAWAY
}

void Connection::close_now() {
  if (state_ == State::closed) return;
  state_ = State::closed;
  worker_.loop().cancel(timer_);
  worker_.loop().cancel(goaway_timer_);
  session_.abort_streams();
  endpoint_.release(this);
}

// ---- SessionHost --------------------------------------------------------------

void Connection::run_request(http::Exchange& ex) { http::run_request(ex); }

void Connection::log_request(http::Exchange& ex) {
  worker_.access_log().log(ex);
  post_action::after_response(ex);
}

void Connection::wake() {
  if (!in_drive_) schedule_drive();
}

void Connection::schedule_drive() {
  if (drive_scheduled_ || state_ != State::active) return;
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

void Connection::cid_added(const ngtcp2_cid& cid) {
  cids_.push_back(cid);
  endpoint_.add_cid(cid, this);
}

void Connection::handshake_completed() {
  endpoint_.handshake_finished(this, true);
  metrics::record_connection(session_.speaks_hq() ? metrics::conn_hq : metrics::conn_h3);
}

void Connection::cid_removed(const ngtcp2_cid& cid) {
  endpoint_.remove_cid(cid);
  cids_.erase(std::remove_if(cids_.begin(), cids_.end(), [&](const ngtcp2_cid& c) { return ngtcp2_cid_eq(&c, &cid); }),
              cids_.end());
}

}  // namespace torii::http3
