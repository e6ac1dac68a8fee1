#include "core/thread_cache_new.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "core/recycled.h"  // TORII_RECYCLE_BLOCKS: off under AddressSanitizer

namespace torii::core {

#if !TORII_RECYCLE_BLOCKS

size_t release_thread_cache() { return 0; }
void* take_block(size_t n) { return std::malloc(n); }
void give_block(void* p, size_t) { std::free(p); }

#else

namespace {

// Class c holds blocks of 16c + 24 bytes: exactly what glibc's chunks of
// 16c + 32 give (8 bytes of each are its header), so rounding a request up
// to its class costs no memory malloc would not have spent anyway.
constexpr size_t kGrain = 16;
constexpr size_t kSmallest = 24;
constexpr size_t kClasses = 64;
constexpr size_t kLargest = kSmallest + (kClasses - 1) * kGrain;  // 1032 bytes

constexpr size_t class_of(size_t n) { return n <= kSmallest ? 0 : (n - kSmallest + kGrain - 1) / kGrain; }
constexpr size_t block_size(size_t c) { return kSmallest + c * kGrain; }

struct FreeBlock {
  FreeBlock* next;
};

// The lists are plain thread_local data (no constructor, no destructor), so
// new and delete reach them without the guard a thread_local object with a
// destructor costs on every use; emptying them when the thread ends is the
// job of a separate object, armed when the thread caches its first block.
struct Cache {
  FreeBlock* head[kClasses];
  size_t bytes;

  size_t release() {
    const size_t freed = bytes;
    for (auto& h : head)
      while (FreeBlock* b = h) {
        h = b->next;
        std::free(b);
      }
    bytes = 0;
    return freed;
  }
};

constinit thread_local Cache cache{};
constinit thread_local bool exit_armed = false;
// Set once this thread's cache is emptied at its end: deletes made later in
// the thread's exit (other thread_local objects) go straight to free().
constinit thread_local bool cache_gone = false;

struct ReleaseAtExit {
  bool armed = false;
  ~ReleaseAtExit() {
    cache.release();
    cache_gone = true;
  }
};
thread_local ReleaseAtExit release_at_exit;  // constructed, and its destructor registered, on first use

void* allocate(size_t n) {
  if (n > kLargest) return std::malloc(n);
  const size_t c = class_of(n);
  if (FreeBlock* b = cache.head[c]) {  // (empty once the thread's cache is gone)
    cache.head[c] = b->next;
    cache.bytes -= block_size(c);
    return b;
  }
  return std::malloc(block_size(c));  // whole class size: any later new of the class fits it
}

// `c` is a class the block can hold (its own, or one below).
void give_back(void* p, size_t c) {
  if (cache_gone || cache.bytes + block_size(c) > kMaxCachedBytes) return std::free(p);
  if (!exit_armed) {
    exit_armed = true;
    release_at_exit.armed = true;
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = cache.head[c];
  cache.head[c] = b;
  cache.bytes += block_size(c);
}

void release_sized(void* p, size_t n) {
  if (!p) return;
  if (n > kLargest) return std::free(p);
  give_back(p, class_of(n));
}

// No size given: the block holds its usable size, so it serves the
// largest class that fits in it (its own, or one above).
void release_usable(void* p, size_t usable) {
  // glibc may hand out a few bytes more than asked; much more is a block
  // from outside the classes (a realloc'd one), which goes back to malloc.
  if (usable < kSmallest || usable > kLargest + kSmallest) return std::free(p);
  give_back(p, std::min((usable - kSmallest) / kGrain, kClasses - 1));
}

void release_unsized(void* p) {
  if (p) release_usable(p, malloc_usable_size(p));
}

}  // namespace

size_t release_thread_cache() { return cache.release(); }
void* take_block(size_t n) { return allocate(n); }
void give_block(void* p, size_t usable) {
  if (p) release_usable(p, usable);
}

#endif

}  // namespace torii::core

#if TORII_RECYCLE_BLOCKS

void* operator new(std::size_t n) {
  if (void* p = torii::core::allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = torii::core::allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return torii::core::allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return torii::core::allocate(n); }
void operator delete(void* p) noexcept { torii::core::release_unsized(p); }
void operator delete[](void* p) noexcept { torii::core::release_unsized(p); }
void operator delete(void* p, std::size_t n) noexcept { torii::core::release_sized(p, n); }
void operator delete[](void* p, std::size_t n) noexcept { torii::core::release_sized(p, n); }
void operator delete(void* p, const std::nothrow_t&) noexcept { torii::core::release_unsized(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { torii::core::release_unsized(p); }

#endif
