#include "http2/block_pool.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <sanitizer/asan_interface.h>  // no-ops unless built with AddressSanitizer

namespace torii::http2 {

namespace {

// Each block starts with a header: its class, or for a block too large to
// pool its size. 16 bytes keep the caller's block aligned as malloc's are.
constexpr size_t kHeader = 16;
constexpr uint32_t kUnpooled = 0xffffffff;

struct Header {
  uint32_t klass;
  uint32_t unused;
  size_t size;  // the block's usable size
};
static_assert(sizeof(Header) <= kHeader);

Header* header_of(void* p) { return reinterpret_cast<Header*>(static_cast<unsigned char*>(p) - kHeader); }

}  // namespace

BlockPool::BlockPool() {
  mem_.mem_user_data = this;
  mem_.malloc = [](size_t size, void* self) { return static_cast<BlockPool*>(self)->allocate(size); };
  mem_.free = [](void* p, void* self) { static_cast<BlockPool*>(self)->release(p); };
  mem_.calloc = [](size_t n, size_t size, void* self) -> void* {
    if (size != 0 && n > SIZE_MAX / size) return nullptr;
    void* p = static_cast<BlockPool*>(self)->allocate(n * size);
    if (p) std::memset(p, 0, n * size);
    return p;
  };
  mem_.realloc = [](void* p, size_t size, void* self) { return static_cast<BlockPool*>(self)->reallocate(p, size); };
}

BlockPool::~BlockPool() {
  for (FreeBlock*& head : free_) {
    while (head) {
      FreeBlock* next = head->next;
      ASAN_UNPOISON_MEMORY_REGION(head, header_of(head)->size);
      std::free(header_of(head));
      head = next;
    }
  }
}

void* BlockPool::allocate(size_t size) {
  if (size == 0) size = 1;
  if (size <= kMaxPooled) {
    const size_t c = (size - 1) / kStep;
    if (FreeBlock* block = free_[c]) {
      ASAN_UNPOISON_MEMORY_REGION(block, (c + 1) * kStep);
      free_[c] = block->next;
      kept_bytes_ -= (c + 1) * kStep;
      return block;
    }
    auto* h = static_cast<Header*>(std::malloc(kHeader + (c + 1) * kStep));
    if (!h) return nullptr;
    h->klass = uint32_t(c);
    h->size = (c + 1) * kStep;
    return reinterpret_cast<unsigned char*>(h) + kHeader;
  }
  if (size > SIZE_MAX - kHeader) return nullptr;
  auto* h = static_cast<Header*>(std::malloc(kHeader + size));
  if (!h) return nullptr;
  h->klass = kUnpooled;
  h->size = size;
  return reinterpret_cast<unsigned char*>(h) + kHeader;
}

void BlockPool::release(void* p) {
  if (!p) return;
  Header* h = header_of(p);
  if (h->klass == kUnpooled || kept_bytes_ + h->size > kKeepBytes) {
    std::free(h);
    return;
  }
  auto* block = static_cast<FreeBlock*>(p);
  block->next = free_[h->klass];
  free_[h->klass] = block;
  kept_bytes_ += h->size;
  // A use after nghttp2 freed it stays an error under AddressSanitizer.
  ASAN_POISON_MEMORY_REGION(static_cast<char*>(p) + sizeof(FreeBlock), h->size - sizeof(FreeBlock));
}

void* BlockPool::reallocate(void* p, size_t size) {
  if (!p) return allocate(size);
  if (size == 0) {
    release(p);
    return nullptr;
  }
  const size_t have = header_of(p)->size;
  if (size <= have) return p;
  void* q = allocate(size);
  if (!q) return nullptr;
  std::memcpy(q, p, have);
  release(p);
  return q;
}

}  // namespace torii::http2
