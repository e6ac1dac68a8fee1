// One epoll loop per worker thread (edge-triggered; listening sockets are
// level-triggered, see Worker's acceptor). Owns the timer wheel,
// the cached clock, work deferred to the end of the loop turn (so nothing
// is destroyed inside its own callback), and a queue other threads use to
// hand this loop work, woken by an eventfd.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "core/timer_wheel.h"

namespace torii::core {

class IoHandler {
 public:
  virtual ~IoHandler() = default;
  // `events` are EPOLLIN / EPOLLOUT / EPOLLERR / EPOLLHUP / EPOLLRDHUP bits.
  virtual void on_io(uint32_t events) = 0;
};

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  enum class Trigger : uint8_t { edge, level };
  // Registers fd for read and write readiness, edge-triggered unless asked.
  bool add(int fd, IoHandler* handler, uint32_t events, Trigger trigger = Trigger::edge);
  bool modify(int fd, IoHandler* handler, uint32_t events, Trigger trigger = Trigger::edge);
  void remove(int fd);

  // Runs until stop(); each turn: wait, dispatch, fire timers, run deferred.
  void run();
  void stop() { running_ = false; }

  // Runs `fn` at the end of this loop turn (this thread only).
  void defer(std::function<void()> fn) { deferred_.push_back(std::move(fn)); }
  // Queues `fn` from any thread; runs on this loop's thread.
  void post(std::function<void()> fn);

  int64_t now_ms() const { return now_ms_; }
  void arm(Timer& t, int64_t delay_ms) { wheel_.arm(t, now_ms_, delay_ms); }
  void cancel(Timer& t) { wheel_.cancel(t); }

 private:
  void drain_posted();
  void run_deferred();

  int epfd_ = -1;
  int wakefd_ = -1;
  bool running_ = false;
  int64_t now_ms_;
  TimerWheel wheel_;
  std::vector<std::function<void()>> deferred_;
  std::vector<std::function<void()>> running_deferred_;  // the batch run_deferred() is running
  std::mutex posted_mu_;
  std::vector<std::function<void()>> posted_;
};

}  // namespace torii::core
