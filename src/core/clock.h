// Time as the event loop sees it: read once per loop turn, so a request's
// many timestamps cost nothing and agree with each other.
#pragma once

#include <cstdint>
#include <ctime>

namespace torii::core {

inline int64_t monotonic_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

inline int64_t unix_ms() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

}  // namespace torii::core
