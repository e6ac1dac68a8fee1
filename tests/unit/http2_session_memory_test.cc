// The allocator an HTTP/2 session hands nghttp2: counting, and the frame
// buffer in page-backed blocks whose pages an idle session gives back.
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <cstring>

#include "core/recycled.h"
#include "http2/frame_blocks.h"
#include "http2/session_memory.h"

namespace torii::http2 {
namespace {

constexpr size_t kFrameBuffer = 16384 + 10;  // nghttp2's outbound frame chunk

TEST(FrameBlocks, BlocksArePageAlignedAndReusedAndReleasedPagesReadZero) {
  FrameBlocks pool;
  void* a = pool.take();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 4096, 0u);
  std::memset(a, 0xab, FrameBlocks::kBlockBytes);
  pool.give(a);
  pool.release_idle();
  void* b = pool.take();
  EXPECT_EQ(a, b);  // the lowest free block goes first
  for (size_t i = 0; i < FrameBlocks::kBlockBytes; i += 512) ASSERT_EQ(static_cast<unsigned char*>(b)[i], 0);
  pool.give(b);
}

TEST(SessionMemory, CountsWhatIsHeldAndTakesTheFrameBufferFromABlock) {
  SessionMemory m;
  nghttp2_mem* mem = m.mem();
  void* small = mem->malloc(100, mem->mem_user_data);
  void* zeroed = mem->calloc(256, 16, mem->mem_user_data);
  void* frame = mem->realloc(nullptr, kFrameBuffer, mem->mem_user_data);  // as nghttp2 makes its buffers
  ASSERT_TRUE(small && zeroed && frame);
  for (size_t i = 0; i < 4096; ++i) ASSERT_EQ(static_cast<unsigned char*>(zeroed)[i], 0);
#if TORII_RECYCLE_BLOCKS
  EXPECT_EQ(reinterpret_cast<uintptr_t>(frame) % 4096, 0u);
  EXPECT_EQ(m.block_bytes(), FrameBlocks::kBlockBytes);
#endif
  EXPECT_GE(m.live_bytes(), 100 + 4096 + kFrameBuffer);
  std::memset(frame, 1, kFrameBuffer);
  m.release_idle_pages();  // nothing in flight: the pages go, the block stays
  EXPECT_EQ(static_cast<unsigned char*>(frame)[0], m.block_bytes() ? 0 : 1);
  static_cast<char*>(frame)[0] = 2;  // and it is still writable
  mem->free(frame, mem->mem_user_data);
  mem->free(zeroed, mem->mem_user_data);
  mem->free(small, mem->mem_user_data);
  EXPECT_EQ(m.live_bytes(), 0u);
  EXPECT_EQ(m.block_bytes(), 0u);
  EXPECT_GE(m.peak_bytes(), 100 + 4096 + kFrameBuffer);
}

TEST(SessionMemory, AnNghttp2ServerSessionGivesEverythingBack) {
  SessionMemory m;
  nghttp2_session_callbacks* cbs = nullptr;
  ASSERT_EQ(nghttp2_session_callbacks_new(&cbs), 0);
  nghttp2_session* s = nullptr;
  ASSERT_EQ(nghttp2_session_server_new3(&s, cbs, nullptr, nullptr, m.mem()), 0);
  nghttp2_session_callbacks_del(cbs);
  // Its fixed part: the session, the stream map, the HPACK tables and the
  // frame buffer (a block, of which only written pages become resident).
  EXPECT_GT(m.live_bytes(), kFrameBuffer);
  nghttp2_session_del(s);
  EXPECT_EQ(m.live_bytes(), 0u);
}

}  // namespace
}  // namespace torii::http2
