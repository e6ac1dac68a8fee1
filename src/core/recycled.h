// Per-thread reuse of freed blocks for a class made and destroyed at the
// rate of requests (a connection, on short connections). glibc's fast
// per-thread cache stops at about 1 KB, so a bigger object takes malloc's
// slow path twice per connection; here a freed block waits in a short
// per-thread list for the next one. A final class opts in by deriving from
// Recycled<Self>. Under AddressSanitizer blocks go straight back to malloc
// so that a use after free is still caught.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TORII_RECYCLE_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TORII_RECYCLE_BLOCKS 0
#endif
#endif
#ifndef TORII_RECYCLE_BLOCKS
#define TORII_RECYCLE_BLOCKS 1
#endif

namespace torii::core {

namespace recycled_detail {
// The calling thread's lists, as functions that empty them.
inline std::vector<void (*)()>& drains() {
  thread_local std::vector<void (*)()> list;
  return list;
}
}  // namespace recycled_detail

// Gives every block the calling thread keeps back to malloc (the worker
// went quiet: a kept block scattered in a freed region holds a page that
// malloc_trim could otherwise return).
inline void drain_recycled_blocks() {
  for (auto drain : recycled_detail::drains()) drain();
}

template <class T, size_t kKeep = 256>
class Recycled {
 public:
  static void* operator new(size_t size) {
#if TORII_RECYCLE_BLOCKS
    auto& blocks = free_blocks();
    if (size == sizeof(T) && !blocks.empty()) {
      void* p = blocks.back();
      blocks.pop_back();
      return p;
    }
#endif
    return ::operator new(size);
  }

  static void operator delete(void* p, size_t size) {
#if TORII_RECYCLE_BLOCKS
    auto& blocks = free_blocks();
    if (size == sizeof(T) && blocks.size() < kKeep) {
      blocks.push_back(p);
      return;
    }
#endif
    ::operator delete(p);
  }

 private:
  static void drain() {
    auto& blocks = free_blocks();
    for (void* p : blocks) ::operator delete(p);
    blocks.clear();
  }

  struct FreeBlocks {
    std::vector<void*> blocks;
    FreeBlocks() {
      blocks.reserve(kKeep);
      recycled_detail::drains().push_back(&Recycled::drain);
    }
    ~FreeBlocks() {
      for (void* p : blocks) ::operator delete(p);
    }
  };
  static std::vector<void*>& free_blocks() {
    thread_local FreeBlocks list;
    return list.blocks;
  }
};

}  // namespace torii::core
