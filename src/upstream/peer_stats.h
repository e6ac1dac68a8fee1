// Each upstream server's counters for the admin API, process-wide and kept
// by server id, so they carry across the versions of a group the API makes.
// Relaxed atomics bumped by the worker that serves the request; they exist
// only when the config has an `api` location.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>

namespace torii::upstream {

struct PeerStats {
  std::atomic<int64_t> active{0};      // requests with a connection to the server now
  std::atomic<uint64_t> requests{0};   // connections (tries) made to it
  std::atomic<uint64_t> fails{0};      // tries that failed (passive health's count)
  std::atomic<uint64_t> responses[5];  // 1xx .. 5xx response heads it sent
  PeerStats() {
    for (auto& r : responses) r.store(0, std::memory_order_relaxed);
  }
};

class PeerStatsTable {
 public:
  // The counters of server `id`; the reference stays valid for the table's life.
  PeerStats& at(unsigned id) {
    std::lock_guard lock(mu_);
    while (stats_.size() <= id) stats_.emplace_back();  // a deque never moves its elements
    return stats_[id];
  }

 private:
  std::mutex mu_;
  std::deque<PeerStats> stats_;
};

}  // namespace torii::upstream
