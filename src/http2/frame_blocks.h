// Page-backed blocks for nghttp2's outbound frame buffer, one per thread's
// pool. nghttp2 gives every session a 16 KB buffer for the frame being
// sent and keeps it for the session's life, but with DATA payloads copied
// by our send callback only frame headers, SETTINGS and HEADERS blocks
// are written into it: usually its first page. Taken from malloc, the
// block lands on pages other allocations already dirtied, and an idle
// connection pays all 16 KB of resident memory for it. Here each block is
// whole pages of an anonymous mapping that only a write makes resident, so
// an idle session pays the page or two its frames touched.
#pragma once

#include <cstddef>
#include <vector>

namespace torii::http2 {

class FrameBlocks {
 public:
  // A block holds nghttp2's frame buffer chunk (16384 + 10 bytes), in pages.
  static constexpr size_t kBlockBytes = 20 * 1024;
  // Requests this large or larger (up to kBlockBytes) take a block.
  static constexpr size_t kMinBytes = 16 * 1024;

  // The calling thread's pool.
  static FrameBlocks& local();

  // A block of kBlockBytes, page-aligned; nullptr if no memory could be mapped.
  void* take();
  void give(void* block);
  // Hands the resident pages of the blocks not in use back to the kernel
  // (the worker went quiet). The blocks stay mapped for reuse.
  void release_idle();

  size_t free_blocks() const { return free_.size(); }

  FrameBlocks() = default;
  ~FrameBlocks();
  FrameBlocks(const FrameBlocks&) = delete;
  FrameBlocks& operator=(const FrameBlocks&) = delete;

 private:
  static constexpr size_t kBlocksPerSlab = 32;  // one mmap per 32 blocks (640 KB of address space)
  bool add_slab();

  std::vector<void*> free_;
  std::vector<void*> slabs_;
  bool dirty_free_ = false;  // a block given back since the last release_idle()
};

}  // namespace torii::http2
