// The per-thread block cache behind operator new: a freed small block is
// the next one handed out for its size class, what a thread keeps is
// bounded, blocks freed on another thread join that thread's cache, and
// release_thread_cache gives everything back. Under AddressSanitizer the
// library's operator new is kept, so these tests are skipped there.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/recycled.h"
#include "core/thread_cache_new.h"

namespace torii::core {
namespace {

class ThreadCacheNew : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TORII_RECYCLE_BLOCKS) GTEST_SKIP() << "AddressSanitizer build: operator new is the library's";
    release_thread_cache();
  }
};

TEST_F(ThreadCacheNew, AFreedBlockIsTheNextOneOfItsClass) {
  for (size_t size : {1, 24, 25, 100, 500, 1000, 1032}) {
    auto* a = static_cast<char*>(::operator new(size));
    std::memset(a, 'x', size);  // the whole size is writable
    ::operator delete(a, size);
    auto* b = static_cast<char*>(::operator new(size));
    EXPECT_EQ(a, b) << size;
    EXPECT_GE(malloc_usable_size(b), size);
    ::operator delete(b, size);
  }
}

TEST_F(ThreadCacheNew, SizesInOneClassShareBlocksAndEachBlockHoldsTheClass) {
  // 25..40 bytes are one class (glibc's 48-byte chunks).
  auto* a = static_cast<char*>(::operator new(25));
  ::operator delete(a, 25);
  auto* b = static_cast<char*>(::operator new(40));
  EXPECT_EQ(a, b);
  std::memset(b, 'y', 40);
  ::operator delete(b, 40);
  // An unsized delete files the block by its usable size (malloc's,
  // usually exactly the class size): still served.
  auto* c = static_cast<char*>(::operator new(33));
  EXPECT_EQ(b, c);
  const bool exact = malloc_usable_size(c) == 40;
  ::operator delete(c);
  auto* d = static_cast<char*>(::operator new(40));
  if (exact) {
    EXPECT_EQ(c, d);
  }
  ::operator delete(d, 40);
}

TEST_F(ThreadCacheNew, LargeBlocksGoStraightBackToMalloc) {
  void* a = ::operator new(4096);
  ::operator delete(a, 4096);
  EXPECT_EQ(release_thread_cache(), 0u);
  std::string big(100000, 'z');  // and the library's own containers work over it
  EXPECT_EQ(big.size(), 100000u);
}

TEST_F(ThreadCacheNew, WhatAThreadKeepsIsBounded) {
  std::vector<void*> blocks;
  for (size_t i = 0; i < 4 * kMaxCachedBytes / 512; ++i) blocks.push_back(::operator new(500));
  for (void* p : blocks) ::operator delete(p, 500);
  const size_t kept = release_thread_cache();
  EXPECT_LE(kept, kMaxCachedBytes);
  EXPECT_GE(kept, kMaxCachedBytes / 2);
  EXPECT_EQ(release_thread_cache(), 0u);
}

TEST_F(ThreadCacheNew, BlocksFreedOnAnotherThreadJoinThatThreadsCache) {
  std::vector<std::unique_ptr<std::string>> made;
  for (int i = 0; i < 100; ++i) made.push_back(std::make_unique<std::string>(200, 'q'));
  size_t kept_there = 0;
  std::thread other([&] {
    made.clear();
    kept_there = release_thread_cache();
  });
  other.join();
  EXPECT_GE(kept_there, 100u * 200);
}

TEST_F(ThreadCacheNew, AThreadThatEndsGivesItsBlocksBack) {
  // Nothing to observe from outside but that it does not crash or leak
  // under the test runner: blocks freed after the thread's cache is gone
  // (in other thread_local destructors) go to free().
  for (int round = 0; round < 20; ++round) {
    std::thread t([] {
      thread_local std::vector<std::string> late(50, std::string(100, 'w'));
      std::vector<std::string> now(50, std::string(300, 'v'));
      EXPECT_EQ(late.size(), 50u);
    });
    t.join();
  }
}

TEST_F(ThreadCacheNew, NghttpBlocksAreMallocsAndComeBackThroughTheCache) {
  void* p = take_block(150);
  ASSERT_NE(p, nullptr);
  p = std::realloc(p, 3000);  // nghttp2 may grow a block
  ASSERT_NE(p, nullptr);
  give_block(p, malloc_usable_size(p));  // too large for a class: freed
  EXPECT_EQ(release_thread_cache(), 0u);
  void* q = take_block(150);
  const size_t usable = malloc_usable_size(q);
  give_block(q, usable);
  void* r = take_block(150);
  if (usable == 152) {  // 150 rounds up to the 152-byte class
    EXPECT_EQ(r, q);
  }
  give_block(r, malloc_usable_size(r));
}

}  // namespace
}  // namespace torii::core
