// The allocator one HTTP/2 session hands nghttp2 (nghttp2_session_server_new3):
// it counts the bytes nghttp2 holds for the session, so tests and logs can
// say what a connection costs, and it takes nghttp2's outbound frame buffer
// from FrameBlocks (see frame_blocks.h) instead of malloc. Everything else
// goes to malloc unchanged.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstddef>

namespace torii::http2 {

class SessionMemory {
 public:
  SessionMemory();
  ~SessionMemory();
  SessionMemory(const SessionMemory&) = delete;
  SessionMemory& operator=(const SessionMemory&) = delete;

  nghttp2_mem* mem() { return &mem_; }
  // Bytes nghttp2 holds now (malloc's usable sizes; a frame block counts
  // whole), the most it held at once, and the bytes in frame blocks.
  size_t live_bytes() const { return live_; }
  size_t peak_bytes() const { return peak_; }
  size_t block_bytes() const;

  // Gives the pages of the frame blocks back to the kernel. Only while
  // nghttp2 has no frame in them (nothing to send): it writes each frame
  // from the block's start, so the zeroed pages it finds later are as good.
  void release_idle_pages();

 private:
  static void* on_malloc(size_t size, void* self);
  static void on_free(void* ptr, void* self);
  static void* on_calloc(size_t n, size_t size, void* self);
  static void* on_realloc(void* ptr, size_t size, void* self);

  void* allocate(size_t size);
  void release(void* ptr);
  bool is_block(void* ptr) const;
  size_t size_of(void* ptr) const;
  void note(size_t added, size_t removed);

  nghttp2_mem mem_;
  // nghttp2 holds one frame block, two when a header block outgrows the
  // first chunk; more go to malloc.
  static constexpr int kMaxBlocks = 2;
  void* blocks_[kMaxBlocks] = {nullptr, nullptr};
  size_t live_ = 0;
  size_t peak_ = 0;
};

}  // namespace torii::http2
