#include "http2/session_memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "core/recycled.h"
#include "core/thread_cache_new.h"
#include "http2/frame_blocks.h"

namespace torii::http2 {

SessionMemory::SessionMemory() : mem_{this, &on_malloc, &on_free, &on_calloc, &on_realloc} {}

SessionMemory::~SessionMemory() {
  // nghttp2_session_del gave every block back; a block still here was
  // never freed by nghttp2 and stays out of the pool.
}

size_t SessionMemory::block_bytes() const {
  size_t n = 0;
  for (void* b : blocks_)
    if (b) n += FrameBlocks::kBlockBytes;
  return n;
}

void SessionMemory::release_idle_pages() {
  for (void* b : blocks_)
    if (b) madvise(b, FrameBlocks::kBlockBytes, MADV_DONTNEED);
}

bool SessionMemory::is_block(void* ptr) const {
  for (void* b : blocks_)
    if (b && b == ptr) return true;
  return false;
}

size_t SessionMemory::size_of(void* ptr) const {
  return is_block(ptr) ? FrameBlocks::kBlockBytes : malloc_usable_size(ptr);
}

void SessionMemory::note(size_t added, size_t removed) {
  live_ += added;
  live_ -= removed;
  if (live_ > peak_) peak_ = live_;
}

void* SessionMemory::allocate(size_t size) {
#if TORII_RECYCLE_BLOCKS  // under AddressSanitizer every block comes from malloc
  if (size >= FrameBlocks::kMinBytes && size <= FrameBlocks::kBlockBytes) {
    for (void*& slot : blocks_) {
      if (slot) continue;
      slot = FrameBlocks::local().take();
      if (!slot) break;
      note(FrameBlocks::kBlockBytes, 0);
      return slot;
    }
  }
#endif
  void* p = core::take_block(size);
  if (p) note(malloc_usable_size(p), 0);
  return p;
}

void SessionMemory::release(void* ptr) {
  if (!ptr) return;
  for (void*& slot : blocks_) {
    if (slot != ptr) continue;
    FrameBlocks::local().give(ptr);
    slot = nullptr;
    note(0, FrameBlocks::kBlockBytes);
    return;
  }
  const size_t usable = malloc_usable_size(ptr);
  note(0, usable);
  core::give_block(ptr, usable);
}

void* SessionMemory::on_malloc(size_t size, void* self) { return static_cast<SessionMemory*>(self)->allocate(size); }

void SessionMemory::on_free(void* ptr, void* self) { static_cast<SessionMemory*>(self)->release(ptr); }

void* SessionMemory::on_calloc(size_t n, size_t size, void* self) {
  // Zeroed memory comes from calloc, which knows when its pages are fresh.
  auto* m = static_cast<SessionMemory*>(self);
  void* p = std::calloc(n, size);
  if (p) m->note(malloc_usable_size(p), 0);
  return p;
}

void* SessionMemory::on_realloc(void* ptr, size_t size, void* self) {
  auto* m = static_cast<SessionMemory*>(self);
  if (!ptr) return m->allocate(size);  // nghttp2 makes its buffers this way
  if (m->is_block(ptr)) {
    if (size <= FrameBlocks::kBlockBytes) return ptr;
    void* p = m->allocate(size);
    if (!p) return nullptr;
    std::memcpy(p, ptr, FrameBlocks::kBlockBytes);
    m->release(ptr);
    return p;
  }
  const size_t before = malloc_usable_size(ptr);
  void* p = std::realloc(ptr, size);
  if (!p) return nullptr;
  m->note(malloc_usable_size(p), before);
  return p;
}

}  // namespace torii::http2
