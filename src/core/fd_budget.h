// The process's descriptors (RLIMIT_NOFILE, shared by every worker thread)
// as a budget, so that a full server stops accepting before the last ones
// instead of accepting connections it then cannot serve (no descriptor
// left to open the file or connect upstream: 500s and 502s). Each client
// connection is counted as two descriptors, its socket and the one file or
// upstream socket its request may open; idle upstream connections count
// one each; a reserve (16 + limit/32, less for a tiny limit) stays free
// for what is not counted (request body
// temp files, several HTTP/2 streams, logs reopened, reloads). Connections
// beyond the budget wait in the listen queue, as with nginx's
// worker_connections, and are accepted as others close.
#pragma once

#include <atomic>
#include <cstdint>

namespace torii::core {

class FdBudget {
 public:
  static constexpr int64_t kPerConnection = 2;

  // The one budget of this process.
  static FdBudget& process();

  // `limit`: descriptors the process may hold; `fixed`: those open now
  // that stay (listening sockets, logs, event loops). Before start() every
  // connection fits.
  void start(int64_t limit, int64_t fixed);

  // True if one more client connection fits, with the reserve left over.
  bool room_for_connection() const;
  // Counted descriptors taken (n > 0) or given back (n < 0).
  void add(int64_t n) { counted_.fetch_add(n, std::memory_order_relaxed); }

  int64_t limit() const { return limit_.load(std::memory_order_relaxed); }
  int64_t in_use() const {
    return fixed_.load(std::memory_order_relaxed) + counted_.load(std::memory_order_relaxed);
  }
  int64_t reserve() const;

  // The soft RLIMIT_NOFILE, and how many descriptors this process has open.
  static int64_t current_limit();
  static int64_t count_open();

 private:
  std::atomic<int64_t> limit_{0};  // 0: not started
  std::atomic<int64_t> fixed_{0};
  std::atomic<int64_t> counted_{0};
};

}  // namespace torii::core
