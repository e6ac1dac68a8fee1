// Gives the heap memory that many closed connections freed back to the
// kernel. glibc keeps freed memory in its arenas: holes between live
// blocks are never returned on their own, and a thread arena's free top is
// returned only past M_TRIM_THRESHOLD, which allocator_tuning raises to 32 MB
// so that response-sized buffers are not faulted in and out on every
// request. So after a crowd of connections closes, the process would stay
// at its peak. A worker asks due() once a second (its housekeeping timer);
// it says yes once the worker's connections have stayed well below their
// high point for two ticks, and the worker then trims (malloc_trim: every
// free page of every arena). The same goes for connections that stay open
// but went quiet together: each gives back its TLS record buffers (~34 KB)
// after a second of quiet, and once the count of such releases per tick
// has fallen well below its high point for two ticks, the worker trims.
// A steady worker, however busy, never trims.
#pragma once

#include <cstddef>

namespace torii::core {

class MemoryReturn {
 public:
  // Fewer connections than this gone since the high point: not worth a trim.
  static constexpr size_t kMinDrop = 64;
  static constexpr unsigned kQuietTicks = 2;

  // An open connection count seen now (on accept): keeps the high point.
  void note(size_t live) {
    if (live > high_) high_ = live;
  }
  // Once a second with the open connections and the buffers released by
  // quiet connections since the last tick: true when it is time to trim
  // (the high points then start again from these).
  bool due(size_t live, size_t released = 0);

 private:
  size_t high_ = 0;
  size_t released_high_ = 0;
  unsigned quiet_ticks_ = 0;
};

// malloc_trim(0); returns the CPU microseconds it took the calling thread.
long return_freed_memory();

}  // namespace torii::core
