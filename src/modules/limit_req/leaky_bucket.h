// nginx's leaky bucket for limit_req, as pure arithmetic so it can be
// tested alone. Quantities are in milli-requests: a request adds 1000,
// the bucket leaks `rate` (milli-requests per second) as time passes.
#pragma once

#include <cstdint>

namespace torii::limits {

// Milliseconds between two readings of the clock, as nginx clamps them: a
// clock more than a minute behind counts as 1 ms, a little behind as 0.
inline int64_t elapsed_ms(int64_t now, int64_t last) {
  int64_t ms = now - last;
  if (ms < -60000) return 1;
  if (ms < 0) return 0;
  return ms;
}

// The excess after `ms` of leaking and one more request; never negative.
inline int64_t excess_after(int64_t excess, uint64_t rate, int64_t ms) {
  int64_t e = excess - static_cast<int64_t>(rate) * ms / 1000 + 1000;
  return e < 0 ? 0 : e;
}

// How long a request with this excess waits: the part above `delay`
// drains at `rate`. 0: it passes at once.
inline uint64_t delay_ms(uint64_t excess, uint64_t delay, uint64_t rate) {
  if (excess <= delay || rate == 0) return 0;
  return (excess - delay) * 1000 / rate;
}

// True when an idle entry has fully drained (nginx may then drop it to
// make room): at least a minute idle and nothing left in the bucket.
inline bool drained(int64_t excess, uint64_t rate, int64_t ms_idle) {
  if (ms_idle < 0) ms_idle = -ms_idle;
  if (ms_idle < 60000) return false;
  return excess - static_cast<int64_t>(rate) * ms_idle / 1000 <= 0;
}

}  // namespace torii::limits
