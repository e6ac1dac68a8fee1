#include "core/memory_return.h"

#include <malloc.h>

#include <ctime>


namespace torii::core {

bool MemoryReturn::due(size_t live) {
  note(live);
  const bool fell = high_ - live >= kMinDrop && live <= high_ / 2;
  quiet_ticks_ = fell ? quiet_ticks_ + 1 : 0;
  if (quiet_ticks_ < kQuietTicks) return false;
  quiet_ticks_ = 0;
  high_ = live;
  return true;
}

long return_freed_memory() {
  timespec a{}, b{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  malloc_trim(0);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return long((b.tv_sec - a.tv_sec) * 1'000'000 + (b.tv_nsec - a.tv_nsec) / 1000);
}

}  // namespace torii::core
