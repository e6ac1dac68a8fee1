// health_check in an upstream {} block: how the group's servers are probed
// (torii's own directive, shaped like NGINX Plus's), and the verdicts the
// one process-wide prober shares with every worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "config/config.h"

namespace torii::config {

struct HealthCheckConfig {
  Ms interval{5'000};
  unsigned fails = 1;   // consecutive failed probes that take a server out
  unsigned passes = 1;  // consecutive passed probes that bring it back
  std::string uri = "/";
  int status_min = 200;  // match_status=LO-HI (or one code)
  int status_max = 399;
  Ms timeout{5'000};  // connect + request + status line, per probe
};

// One verdict per server, written by the prober, read by every worker's
// balancer on each pick (a relaxed byte load; the array only changes when
// a server changes state, so its cache lines stay shared and clean).
class PeerHealth {
 public:
  explicit PeerHealth(size_t n)
      : n_(n), up_(new std::atomic<uint8_t>[n]), revived_ms_(new std::atomic<int64_t>[n]) {
    for (size_t i = 0; i < n; ++i) {
      up_[i].store(1, std::memory_order_relaxed);
      revived_ms_[i].store(0, std::memory_order_relaxed);
    }
  }
  size_t size() const { return n_; }
  bool up(size_t i) const { return up_[i].load(std::memory_order_relaxed) != 0; }
  // When the check last brought server i back (monotonic ms): passive
  // failures seen before then no longer count, so a server that passes
  // its checks again takes traffic at once, not after fail_timeout.
  int64_t revived_ms(size_t i) const { return revived_ms_[i].load(std::memory_order_relaxed); }
  void set(size_t i, bool up, int64_t now_ms) {
    if (up && !this->up(i)) revived_ms_[i].store(now_ms, std::memory_order_relaxed);
    up_[i].store(up ? 1 : 0, std::memory_order_relaxed);
  }

 private:
  size_t n_;
  std::unique_ptr<std::atomic<uint8_t>[]> up_;
  std::unique_ptr<std::atomic<int64_t>[]> revived_ms_;
};

}  // namespace torii::config
