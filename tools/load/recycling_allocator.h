// A per-thread allocator for nghttp2 that keeps freed blocks for reuse, so
// that once a run is warm an HTTP/2 request costs no call into malloc (nghttp2
// allocates a stream, its frames and its header copies per request). Blocks
// are grouped by power-of-two size classes; what is kept is bounded by the
// most the thread ever had in use at once. Not thread-safe: one per thread.
#pragma once

#include <nghttp2/nghttp2.h>

#include <array>
#include <cstddef>

namespace torii::load {

class RecyclingAllocator {
 public:
  RecyclingAllocator();
  ~RecyclingAllocator();
  RecyclingAllocator(const RecyclingAllocator&) = delete;
  RecyclingAllocator& operator=(const RecyclingAllocator&) = delete;

  void* allocate(size_t size);
  void release(void* p);
  void* reallocate(void* p, size_t size);

  // The nghttp2 view of this allocator.
  nghttp2_mem* nghttp2() { return &mem_; }

 private:
  // Classes of 16 B << i, up to 64 KB; larger blocks go straight to malloc.
  static constexpr size_t kClasses = 13;
  struct FreeBlock {
    FreeBlock* next;
  };
  std::array<FreeBlock*, kClasses> free_{};
  nghttp2_mem mem_;
};

}  // namespace torii::load
