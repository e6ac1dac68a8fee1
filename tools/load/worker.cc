#include "load/worker.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "load/clock.h"
#include "load/quic_connection.h"

namespace torii::load {

namespace {

constexpr int64_t kHousekeepingNs = 100 * kNsPerMs;

// This thread's share of n things over `threads`: index j gets the i < n
// with i % threads == j.
uint64_t share(uint64_t n, unsigned index, unsigned threads) {
  return index < n ? (n - index + threads - 1) / threads : 0;
}

double thread_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  auto seconds = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

RequestSource make_source(const Options& o, unsigned index) {
  if (o.rate > 0) return RequestSource(RateSchedule(o.rate, index, o.threads, o.requests));
  return RequestSource(o.requests ? share(o.requests, index, o.threads) : UINT64_MAX);
}

}  // namespace

Worker::Worker(const RunContext& run, unsigned index, StartGate& gate, const std::atomic<bool>& stop)
    : run_(run), index_(index), gate_(gate), stop_(stop), source_(make_source(run.options, index)) {}

Worker::~Worker() {
  connections_.clear();
  if (timer_fd_ >= 0) close(timer_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

bool Worker::setup() {
  const Options& o = run_.options;
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    setup_error_ = std::string("epoll_create1: ") + std::strerror(errno);
    return false;
  }
  const bool quic = over_quic(o.protocol);
  // Open-loop send times and QUIC's timers need sub-millisecond wake-ups
  // (epoll's own timeout counts in milliseconds).
  if (source_.open_loop() || quic) {
    timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;  // the timer; connections have their own pointer
    if (timer_fd_ < 0 || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, timer_fd_, &ev) != 0) {
      setup_error_ = std::string("timerfd: ") + std::strerror(errno);
      return false;
    }
  }
  read_buffer_.reset(new char[kReadBufferSize]);
  auto count = size_t(share(o.connections, index_, o.threads));
  connections_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (quic) {
      connections_.push_back(std::make_unique<QuicConnection>(*this, run_));
    } else {
      connections_.push_back(std::make_unique<Connection>(*this, run_));
    }
  }
  ready_.reserve(count);
  later_.reserve(count);
  flush_.reserve(count);
  source_.reserve(count * o.streams);
  return true;
}

void Worker::run() {
  bool ok = setup();
  if (ok && !run_.options.connect_per_request) warm_up();
  int64_t start = gate_.arrive_and_wait();
  if (ok) {
    source_.start(start);
    end_ns_ = run_.options.requests ? INT64_MAX : start + run_.options.duration_ns;
    last_done_ns_ = start;
    double cpu_before = thread_cpu_seconds();
    loop();
    stats_.cpu_seconds = thread_cpu_seconds() - cpu_before;
  }
  for (auto& c : connections_) c->abandon();
  progress_requests.store(stats_.requests, std::memory_order_relaxed);
  progress_failed.store(stats_.failed, std::memory_order_relaxed);
  done.store(true, std::memory_order_release);
}

// Every connection is opened before the clock starts, so the first requests
// do not carry the handshakes (as wrk and h2load do); bounded by --timeout.
void Worker::warm_up() {
  int64_t now = now_ns();
  for (auto& c : connections_) c->connect_now(now);
  int64_t deadline = now + run_.options.timeout_ns;
  while (!stop_.load(std::memory_order_relaxed)) {
    now = now_ns();
    bool connecting = std::any_of(connections_.begin(), connections_.end(),
                                  [](const auto& c) { return c->connecting(); });
    if (!connecting || now >= deadline) break;
    int64_t next = fire_deadlines(now);
    arm_timer(now);
    poll(now, std::min({deadline, now + kHousekeepingNs, std::max(now, next)}));
  }
  housekeeping(now_ns());  // fails handshakes that timed out
  later_.clear();
  ready_.clear();
  for (auto& c : connections_) {
    c->in_later = c->in_ready = false;
    c->next_turn();
  }
}

void Worker::loop() {
  for (auto& c : connections_) ready(*c);
  next_housekeeping_ = now_ns() + kHousekeepingNs;
  for (;;) {
    int64_t now = now_ns();
    if (stop_.load(std::memory_order_relaxed)) {
      end_ns_ = std::min(end_ns_, now);
      break;
    }
    if (now >= end_ns_) break;
    if (source_.exhausted() && in_flight_ == 0) {
      end_ns_ = last_done_ns_;
      break;
    }
    for (ClientConnection* c : later_) {
      c->in_later = false;
      c->next_turn();
      ready(*c);
    }
    later_.clear();
    pump(now);
    flush_all();
    if (now >= next_housekeeping_) {
      housekeeping(now);
      next_housekeeping_ = now + kHousekeepingNs;
    }
    int64_t next_deadline = earliest_deadline_ <= now ? fire_deadlines(now) : earliest_deadline_;
    arm_timer(now);
    int64_t until = std::min(end_ns_, next_housekeeping_);
    bool at_once = !later_.empty() || next_deadline <= now_ns();
    poll(now, at_once ? now : until);
  }
  if (source_.open_loop()) stats_.waiting_at_end = source_.waiting(end_ns_);
}

void Worker::pump(int64_t now) {
  while (!ready_.empty()) {
    ClientConnection* c = ready_.back();
    if (c->capacity() == 0) {
      ready_.pop_back();
      c->in_ready = false;
      continue;
    }
    if (!source_.available(now)) break;
    int64_t from = source_.take(now);
    ++in_flight_;
    c->start_request(from, now);
  }
}

void Worker::flush_all() {
  // flush() may close a connection, which never adds to this list.
  for (ClientConnection* c : flush_) {
    c->in_flush = false;
    c->flush();
  }
  flush_.clear();
}

// Open loop: wake when the next request is due, to the nanosecond (epoll's
// own timeout counts in milliseconds); QUIC: when a connection's timer is.
void Worker::arm_timer(int64_t now) {
  if (timer_fd_ < 0) return;
  int64_t due = std::min(source_.open_loop() ? source_.next_due() : INT64_MAX, earliest_deadline_);
  if (due == INT64_MAX || due <= now) return;
  // A wake-up no later than this one is already set: keep it (waking early
  // costs a loop turn; re-arming at every turn would cost a system call,
  // and QUIC's timers move at nearly every packet).
  if (timer_armed_ != 0 && timer_armed_ <= due) return;
  itimerspec spec{};
  spec.it_value.tv_sec = due / kNsPerSec;
  spec.it_value.tv_nsec = due % kNsPerSec;
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
  timer_armed_ = due;
}

void Worker::poll(int64_t now, int64_t until_ns) {
  epoll_event events[256];
  int timeout_ms = 0;
  if (until_ns > now) {
    int64_t wait = (until_ns - now + kNsPerMs - 1) / kNsPerMs;
    timeout_ms = int(std::min<int64_t>(wait, 1000));
  }
  int n = epoll_wait(epoll_fd_, events, 256, timeout_ms);
  for (int i = 0; i < n; ++i) {
    if (events[i].data.ptr == nullptr) {
      uint64_t expirations;
      [[maybe_unused]] ssize_t r = read(timer_fd_, &expirations, sizeof expirations);
      timer_armed_ = 0;
      continue;
    }
    static_cast<ClientConnection*>(events[i].data.ptr)->on_io(events[i].events);
  }
}

int64_t Worker::fire_deadlines(int64_t now) {
  if (earliest_deadline_ > now) return earliest_deadline_;
  // Connections report later deadlines as they run; start from none.
  earliest_deadline_ = INT64_MAX;
  int64_t next = INT64_MAX;
  for (auto& c : connections_) {
    if (c->deadline() <= now) c->on_deadline(now);
    next = std::min(next, c->deadline());
  }
  earliest_deadline_ = std::min(earliest_deadline_, next);
  return earliest_deadline_;
}

void Worker::housekeeping(int64_t now) {
  for (auto& c : connections_) c->check_timeout(now);
  progress_requests.store(stats_.requests, std::memory_order_relaxed);
  progress_failed.store(stats_.failed, std::memory_order_relaxed);
}

void Worker::ready(ClientConnection& c) {
  if (c.in_ready) return;
  c.in_ready = true;
  ready_.push_back(&c);
}

void Worker::ready_next_turn(ClientConnection& c) {
  if (c.in_later) return;
  c.in_later = true;
  later_.push_back(&c);
}

void Worker::flush_later(ClientConnection& c) {
  if (c.in_flush) return;
  c.in_flush = true;
  flush_.push_back(&c);
}

void Worker::completed(int64_t from_ns, int status, int64_t now_ns) {
  --in_flight_;
  last_done_ns_ = now_ns;
  stats_.record_response(status, uint64_t(std::max<int64_t>(0, now_ns - from_ns)));
}

void Worker::failed(int64_t from_ns, ErrorKind kind, const char* why) {
  --in_flight_;
  last_done_ns_ = now_ns();
  stats_.record_error(kind, why);
}

void Worker::retry(int64_t from_ns) {
  --in_flight_;
  source_.give_back(from_ns);
}

}  // namespace torii::load
