#include "http2/frame_blocks.h"

#include <sys/mman.h>

#include <algorithm>
#include <functional>

namespace torii::http2 {

namespace {
constexpr size_t kSlabBytes = 32 * FrameBlocks::kBlockBytes;
}

FrameBlocks& FrameBlocks::local() {
  thread_local FrameBlocks pool;
  return pool;
}

FrameBlocks::~FrameBlocks() {
  // Blocks still held (a session outliving its thread) keep their slab.
  if (free_.size() != slabs_.size() * kBlocksPerSlab) return;
  for (void* slab : slabs_) munmap(slab, kSlabBytes);
}

bool FrameBlocks::add_slab() {
  static_assert(kSlabBytes == kBlocksPerSlab * kBlockBytes);
  void* slab = mmap(nullptr, kSlabBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (slab == MAP_FAILED) return false;
  slabs_.push_back(slab);
  // Handed out from the slab's start: the first blocks of a fresh slab go first.
  for (size_t i = kBlocksPerSlab; i-- > 0;) free_.push_back(static_cast<char*>(slab) + i * kBlockBytes);
  return true;
}

void* FrameBlocks::take() {
  if (free_.empty() && !add_slab()) return nullptr;
  void* block = free_.back();
  free_.pop_back();
  return block;
}

void FrameBlocks::give(void* block) {
  free_.push_back(block);
  dirty_free_ = true;
}

void FrameBlocks::release_idle() {
  if (!dirty_free_) return;
  dirty_free_ = false;
  // One call per run of neighbouring blocks: each call costs a TLB
  // shootdown on every CPU running a thread of ours.
  std::sort(free_.begin(), free_.end(), std::greater<>());  // take() hands out the lowest first
  for (size_t i = free_.size(); i > 0;) {
    char* start = static_cast<char*>(free_[--i]);
    size_t len = kBlockBytes;
    while (i > 0 && free_[i - 1] == start + len) {
      len += kBlockBytes;
      --i;
    }
    madvise(start, len, MADV_DONTNEED);
  }
}

}  // namespace torii::http2
