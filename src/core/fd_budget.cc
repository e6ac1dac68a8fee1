#include "core/fd_budget.h"

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <limits>

namespace torii::core {

FdBudget& FdBudget::process() {
  static FdBudget budget;
  return budget;
}

void FdBudget::start(int64_t limit, int64_t fixed) {
  fixed_.store(fixed, std::memory_order_relaxed);
  limit_.store(limit, std::memory_order_relaxed);
}

int64_t FdBudget::reserve() const {
  // A small limit keeps at least three quarters of what is left for connections.
  const int64_t spare = std::max<int64_t>(0, limit() - fixed_.load(std::memory_order_relaxed));
  return std::min<int64_t>(16 + limit() / 32, spare / 4);
}

bool FdBudget::room_for_connection() const {
  const int64_t limit = this->limit();
  if (limit <= 0) return true;
  // With nothing counted there is nothing to wait for: never refuse the first.
  if (counted_.load(std::memory_order_relaxed) <= 0) return true;
  return in_use() + kPerConnection + reserve() <= limit;
}

int64_t FdBudget::current_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur == RLIM_INFINITY) return std::numeric_limits<int32_t>::max();
  return int64_t(std::min<rlim_t>(rl.rlim_cur, std::numeric_limits<int32_t>::max()));
}

int64_t FdBudget::count_open() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 0;
  int64_t n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;  // the directory's own descriptor
}

}  // namespace torii::core
