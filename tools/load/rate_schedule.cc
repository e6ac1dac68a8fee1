#include "load/rate_schedule.h"

#include <cmath>
#include <cstdint>

namespace torii::load {

RateSchedule::RateSchedule(double rate_per_sec, unsigned thread, unsigned threads, uint64_t total)
    : rate_(rate_per_sec), thread_(thread), threads_(threads ? threads : 1) {
  if (total == 0) {
    limit_ = UINT64_MAX;
  } else {
    // The g < total with g % threads == thread.
    limit_ = thread_ < total ? (total - thread_ + threads_ - 1) / threads_ : 0;
  }
}

int64_t RateSchedule::due_time(uint64_t g) const {
  return start_ns_ + int64_t(std::llround(double(g) * 1e9 / rate_));
}

int64_t RateSchedule::next_due() const {
  if (exhausted()) return INT64_MAX;
  return due_time(uint64_t(thread_) + taken_ * threads_);
}

int64_t RateSchedule::take() {
  int64_t when = next_due();
  ++taken_;
  return when;
}

uint64_t RateSchedule::waiting(int64_t now_ns) const {
  if (now_ns < start_ns_ || exhausted()) return 0;
  // The last request of the run due by now, then how many of ours are at or
  // before it; a step back or forward settles the rounding of due_time.
  auto g = uint64_t(std::floor(double(now_ns - start_ns_) * rate_ / 1e9));
  while (g > 0 && due_time(g) > now_ns) --g;
  while (due_time(g + 1) <= now_ns) ++g;
  if (g < thread_) return 0;
  uint64_t ours = (g - thread_) / threads_ + 1;
  if (ours > limit_) ours = limit_;
  return ours > taken_ ? ours - taken_ : 0;
}

}  // namespace torii::load
