#include "load/recycling_allocator.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace torii::load {

namespace {

// Each block starts with a header holding its class, and for a block too
// large to pool its size (kept 16-byte aligned, as malloc's blocks are).
constexpr size_t kHeader = 16;
constexpr uint8_t kUnpooled = 0xff;

size_t class_size(size_t c) { return size_t{16} << c; }

}  // namespace

RecyclingAllocator::RecyclingAllocator() {
  mem_.mem_user_data = this;
  mem_.malloc = [](size_t size, void* self) { return static_cast<RecyclingAllocator*>(self)->allocate(size); };
  mem_.free = [](void* p, void* self) { static_cast<RecyclingAllocator*>(self)->release(p); };
  mem_.calloc = [](size_t n, size_t size, void* self) -> void* {
    if (size != 0 && n > SIZE_MAX / size) return nullptr;
    void* p = static_cast<RecyclingAllocator*>(self)->allocate(n * size);
    if (p) std::memset(p, 0, n * size);
    return p;
  };
  mem_.realloc = [](void* p, size_t size, void* self) {
    return static_cast<RecyclingAllocator*>(self)->reallocate(p, size);
  };
}

RecyclingAllocator::~RecyclingAllocator() {
  for (FreeBlock*& head : free_) {
    while (head) {
      FreeBlock* next = head->next;
      std::free(reinterpret_cast<char*>(head) - kHeader);
      head = next;
    }
  }
}

void* RecyclingAllocator::allocate(size_t size) {
  size_t c = 0;
  while (c < kClasses && class_size(c) < size) ++c;
  if (c == kClasses) {
    auto* raw = static_cast<unsigned char*>(std::malloc(kHeader + size));
    if (!raw) return nullptr;
    raw[0] = kUnpooled;
    std::memcpy(raw + 8, &size, sizeof size);
    return raw + kHeader;
  }
  if (FreeBlock* block = free_[c]) {
    free_[c] = block->next;
    return block;
  }
  auto* raw = static_cast<unsigned char*>(std::malloc(kHeader + class_size(c)));
  if (!raw) return nullptr;
  raw[0] = uint8_t(c);
  return raw + kHeader;
}

void RecyclingAllocator::release(void* p) {
  if (!p) return;
  unsigned char* raw = static_cast<unsigned char*>(p) - kHeader;
  if (raw[0] == kUnpooled) {
    std::free(raw);
    return;
  }
  auto* block = static_cast<FreeBlock*>(p);
  block->next = free_[raw[0]];
  free_[raw[0]] = block;
}

void* RecyclingAllocator::reallocate(void* p, size_t size) {
  if (!p) return allocate(size);
  if (size == 0) {
    release(p);
    return nullptr;
  }
  unsigned char* raw = static_cast<unsigned char*>(p) - kHeader;
  size_t have = 0;
  if (raw[0] == kUnpooled) {
    std::memcpy(&have, raw + 8, sizeof have);
  } else {
    have = class_size(raw[0]);
    if (size <= have) return p;
  }
  void* q = allocate(size);
  if (!q) return nullptr;
  std::memcpy(q, p, have < size ? have : size);
  release(p);
  return q;
}

}  // namespace torii::load
