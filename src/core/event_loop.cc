#include "core/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "core/clock.h"
#include "log/error_log.h"

namespace torii::core {

namespace {
// The wake eventfd has no handler object; this tag marks it.
IoHandler* const kWakeTag = nullptr;
}  // namespace

EventLoop::EventLoop() : now_ms_(monotonic_ms()), wheel_(now_ms_) {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  wakefd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = kWakeTag;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, wakefd_, &ev);
}

EventLoop::~EventLoop() {
  if (wakefd_ >= 0) close(wakefd_);
  if (epfd_ >= 0) close(epfd_);
}

bool EventLoop::add(int fd, IoHandler* handler, uint32_t events, Trigger trigger) {
  epoll_event ev{};
  ev.events = events | (trigger == Trigger::edge ? uint32_t(EPOLLET) : 0u);
  ev.data.ptr = handler;
  return epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool EventLoop::modify(int fd, IoHandler* handler, uint32_t events, Trigger trigger) {
  epoll_event ev{};
  ev.events = events | (trigger == Trigger::edge ? uint32_t(EPOLLET) : 0u);
  ev.data.ptr = handler;
  return epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void EventLoop::remove(int fd) { epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(posted_mu_);
    posted_.push_back(std::move(fn));
  }
  uint64_t one = 1;
  ssize_t n = write(wakefd_, &one, sizeof one);
  (void)n;  // EAGAIN means a wake-up is already pending
}

void EventLoop::drain_posted() {
  uint64_t v;
  while (read(wakefd_, &v, sizeof v) > 0) {
  }
  std::vector<std::function<void()>> work;
  {
    std::lock_guard<std::mutex> lock(posted_mu_);
    work.swap(posted_);
  }
  for (auto& fn : work) fn();
}

void EventLoop::run_deferred() {
  // Only what was deferred before this point: work that defers itself
  // again (an acceptor with a long queue) waits for the next turn, so I/O
  // events are never starved.
  // The two vectors trade places and keep their capacity: deferring is
  // per connection on short connections and should not allocate.
  running_deferred_.swap(deferred_);
  for (auto& fn : running_deferred_) fn();
  running_deferred_.clear();
}

void EventLoop::run() {
  running_ = true;
  constexpr int kMaxEvents = 512;
  epoll_event events[kMaxEvents];
  while (running_) {
    int timeout = wheel_.next_wait_ms(now_ms_);
    if (!deferred_.empty()) timeout = 0;
    int n = epoll_wait(epfd_, events, kMaxEvents, timeout);
    if (n < 0 && errno != EINTR) {
      TORII_LOG(alert, "epoll_wait() failed (%d)", errno);
      break;
    }
    now_ms_ = monotonic_ms();
    for (int i = 0; i < n; ++i) {
      auto* h = static_cast<IoHandler*>(events[i].data.ptr);
      if (h == kWakeTag) {
        drain_posted();
      } else {
        h->on_io(events[i].events);
      }
    }
    wheel_.advance(now_ms_);
    run_deferred();
  }
  while (!deferred_.empty()) run_deferred();
}

}  // namespace torii::core
