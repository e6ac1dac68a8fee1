// The one clock of torii-load: monotonic nanoseconds. Latency is measured
// with it, so it is read where a request leaves and where its response
// arrives, not once per loop turn.
#pragma once

#include <cstdint>
#include <ctime>

namespace torii::load {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerSec = 1'000'000'000;

}  // namespace torii::load
