#include "http2/block_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace torii::http2 {
namespace {

TEST(Http2BlockPool, AFreedSmallBlockServesTheNextOfItsSize) {
  BlockPool pool;
  void* p = pool.allocate(100);
  void* q = pool.allocate(100);
  ASSERT_NE(p, q);
  pool.release(p);
  EXPECT_EQ(pool.kept_bytes(), 112u);
  EXPECT_EQ(pool.allocate(112), p);  // same 16-byte class
  EXPECT_EQ(pool.kept_bytes(), 0u);
  pool.release(q);
  void* other = pool.allocate(200);
  EXPECT_NE(other, q);  // another class
  void* tiny = pool.allocate(1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tiny) % 16, 0u);
  for (void* block : {p, other, tiny}) pool.release(block);
}

TEST(Http2BlockPool, LargeBlocksAndTheExcessGoBackToMalloc) {
  BlockPool pool;
  void* big = pool.allocate(16 * 1024);
  pool.release(big);
  EXPECT_EQ(pool.kept_bytes(), 0u);  // never kept
  std::vector<void*> blocks;
  for (int i = 0; i < 200; ++i) blocks.push_back(pool.allocate(512));
  for (void* b : blocks) pool.release(b);
  EXPECT_LE(pool.kept_bytes(), BlockPool::kKeepBytes);
  EXPECT_GT(pool.kept_bytes(), BlockPool::kKeepBytes - 512);
}

TEST(Http2BlockPool, ReallocAndCallocKeepTheirPromises) {
  BlockPool pool;
  nghttp2_mem* mem = pool.nghttp2();
  auto* p = static_cast<char*>(mem->malloc(20, mem->mem_user_data));
  std::memcpy(p, "0123456789abcdefghi", 20);
  auto* grown = static_cast<char*>(mem->realloc(p, 4000, mem->mem_user_data));  // pooled -> unpooled
  ASSERT_NE(grown, nullptr);
  EXPECT_STREQ(grown, "0123456789abcdefghi");
  auto* z = static_cast<unsigned char*>(mem->calloc(10, 30, mem->mem_user_data));
  for (int i = 0; i < 300; ++i) ASSERT_EQ(z[i], 0);
  EXPECT_EQ(mem->calloc(SIZE_MAX / 2, 4, mem->mem_user_data), nullptr);  // overflow refused
  EXPECT_EQ(mem->realloc(grown, 0, mem->mem_user_data), nullptr);       // frees
  mem->free(z, mem->mem_user_data);
  mem->free(nullptr, mem->mem_user_data);
}

}  // namespace
}  // namespace torii::http2
