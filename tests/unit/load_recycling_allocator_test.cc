#include "load/recycling_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace torii::load {
namespace {

TEST(LoadRecyclingAllocator, FreedBlocksAreReusedBySize) {
  RecyclingAllocator a;
  void* p = a.allocate(100);
  void* q = a.allocate(100);
  ASSERT_NE(p, q);
  a.release(p);
  void* p2 = a.allocate(120);
  EXPECT_EQ(p2, p);  // same class (128 bytes)
  a.release(q);
  void* other = a.allocate(300);
  EXPECT_NE(other, q);  // another class
  void* q2 = a.allocate(65);
  EXPECT_EQ(q2, q);
  void* tiny = a.allocate(1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tiny) % 16, 0u);
  for (void* block : {p2, other, q2, tiny}) a.release(block);  // kept, freed with the allocator
}

TEST(LoadRecyclingAllocator, ReallocKeepsTheBytesPooledOrNot) {
  RecyclingAllocator a;
  auto* p = static_cast<char*>(a.allocate(10));
  std::memcpy(p, "0123456789", 10);
  EXPECT_EQ(a.reallocate(p, 16), p);  // still fits its class
  auto* big = static_cast<char*>(a.reallocate(p, 100'000));  // beyond the pooled classes
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(std::memcmp(big, "0123456789", 10), 0);
  std::memset(big + 10, 'x', 100'000 - 10);
  auto* bigger = static_cast<char*>(a.reallocate(big, 200'000));
  ASSERT_NE(bigger, nullptr);
  EXPECT_EQ(std::memcmp(bigger, "0123456789", 10), 0);
  EXPECT_EQ(bigger[99'999], 'x');
  a.release(bigger);
  void* fresh = a.reallocate(nullptr, 8);
  EXPECT_NE(fresh, nullptr);
  a.release(fresh);
}

TEST(LoadRecyclingAllocator, CallocThroughNghttp2ViewZeroes) {
  RecyclingAllocator a;
  nghttp2_mem* mem = a.nghttp2();
  auto* p = static_cast<unsigned char*>(mem->malloc(64, mem->mem_user_data));
  std::memset(p, 0xab, 64);
  mem->free(p, mem->mem_user_data);
  auto* z = static_cast<unsigned char*>(mem->calloc(8, 8, mem->mem_user_data));
  EXPECT_EQ(z, p);  // the block came back, and was zeroed
  for (int i = 0; i < 64; ++i) ASSERT_EQ(z[i], 0) << i;
  mem->free(z, mem->mem_user_data);
}

}  // namespace
}  // namespace torii::load
