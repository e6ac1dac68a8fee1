// Threads warm up (connect) on their own, then start together: the last one
// to arrive fixes the start time every thread's schedule counts from.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "load/clock.h"

namespace torii::load {

class StartGate {
 public:
  explicit StartGate(unsigned parties) : waiting_(parties) {}

  // Blocks until every party has arrived; returns the common start time.
  int64_t arrive_and_wait() {
    std::unique_lock lock(mu_);
    if (--waiting_ == 0) {
      start_ns_ = now_ns();
      cv_.notify_all();
    } else {
      cv_.wait(lock, [this] { return waiting_ == 0; });
    }
    return start_ns_;
  }

  // 0 until the run has started.
  int64_t start_ns() {
    std::lock_guard lock(mu_);
    return waiting_ == 0 ? start_ns_ : 0;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned waiting_;
  int64_t start_ns_ = 0;
};

}  // namespace torii::load
