// The allocator one HTTP/2 session's nghttp2 state draws from. nghttp2
// allocates and frees a handful of small blocks for every request (the
// stream, its outbound frames, the HPACK strings of its fields); here a
// freed small block is kept for the next request of the same connection
// instead of going back to malloc, so a warm connection's request makes
// none of those calls. What is kept is bounded (kKeepBytes): an idle
// connection holds no more than that beyond what nghttp2 has in use, and
// everything goes back when the session ends.
#pragma once

#include <nghttp2/nghttp2.h>

#include <array>
#include <cstddef>

namespace torii::http2 {

class BlockPool {
 public:
  BlockPool();
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  void* allocate(size_t size);
  void release(void* p);
  void* reallocate(void* p, size_t size);

  // For nghttp2_session_server_new3: valid as long as this pool is.
  nghttp2_mem* nghttp2() { return &mem_; }

  // Bytes held in free blocks (for tests).
  size_t kept_bytes() const { return kept_bytes_; }

  static constexpr size_t kKeepBytes = 16 * 1024;

 private:
  // Blocks up to kMaxPooled, in classes 16 bytes apart; larger blocks (the
  // session's frame buffers, large header fields) go straight to malloc.
  static constexpr size_t kStep = 16;
  static constexpr size_t kMaxPooled = 512;
  static constexpr size_t kClasses = kMaxPooled / kStep;
  struct FreeBlock {
    FreeBlock* next;
  };
  std::array<FreeBlock*, kClasses> free_{};
  size_t kept_bytes_ = 0;
  nghttp2_mem mem_;
};

}  // namespace torii::http2
