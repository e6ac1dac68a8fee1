#include "core/memory_return.h"

#include <malloc.h>

#include <ctime>

#include "core/thread_cache_new.h"

namespace torii::core {

bool MemoryReturn::due(size_t live, size_t released) {
  note(live);
  if (released > released_high_) released_high_ = released;
  const bool left = high_ - live >= kMinDrop && live <= high_ / 2;
  const bool went_quiet = released_high_ >= kMinDrop && released <= released_high_ / 2;
  quiet_ticks_ = left || went_quiet ? quiet_ticks_ + 1 : 0;
  if (quiet_ticks_ < kQuietTicks) return false;
  quiet_ticks_ = 0;
  high_ = live;
  released_high_ = released;
  return true;
}

long return_freed_memory() {
  timespec a{}, b{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  release_thread_cache();  // its blocks would pin pages malloc_trim could give back
  malloc_trim(0);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return long((b.tv_sec - a.tv_sec) * 1'000'000 + (b.tv_nsec - a.tv_nsec) / 1000);
}

}  // namespace torii::core
