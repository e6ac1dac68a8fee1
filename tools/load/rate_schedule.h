// The send times of an open-loop run (a constant arrival rate). Request g of
// the whole run is due at start + g / rate. With T threads, thread j owns the
// requests g = j, j+T, j+2T, ..., so the threads together keep one even pace.
// Each time is computed from g, never accumulated, so no rounding drifts the
// rate over a long run. A request keeps its time however late it leaves, so
// latency can be measured from when it was due (no coordinated omission).
#pragma once

#include <cstdint>

namespace torii::load {

class RateSchedule {
 public:
  // `total`: requests in the whole run over all threads; 0 means no limit.
  RateSchedule(double rate_per_sec, unsigned thread, unsigned threads, uint64_t total);

  void start(int64_t start_ns) { start_ns_ = start_ns; }
  // How many requests this thread sends in all (UINT64_MAX: no limit).
  uint64_t limit() const { return limit_; }
  bool exhausted() const { return taken_ >= limit_; }
  uint64_t taken() const { return taken_; }
  // When the next request not yet taken is due; INT64_MAX when exhausted.
  int64_t next_due() const;
  bool due(int64_t now_ns) const { return next_due() <= now_ns; }
  // Takes the next request; returns when it was due.
  int64_t take();
  // Requests due by `now_ns` and not yet taken (the backlog).
  uint64_t waiting(int64_t now_ns) const;

  // When request `g` of the whole run is due.
  int64_t due_time(uint64_t g) const;

 private:
  double rate_;
  unsigned thread_;
  unsigned threads_;
  uint64_t limit_;
  uint64_t taken_ = 0;
  int64_t start_ns_ = 0;
};

}  // namespace torii::load
