#include "handlers/open_file_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace torii::handlers {
namespace {

class OpenFileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/torii_ofc_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    cfg_.enabled = true;
    cfg_.max = 10;
    cfg_.inactive = config::Ms(10'000);
    cfg_.valid = config::Ms(1'000);
    cfg_.min_uses = 1;
    cfg_.errors = false;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  std::string write(const std::string& name, const std::string& body, time_t mtime = 1700000000) {
    const std::string p = dir_ + "/" + name;
    FILE* f = fopen(p.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    fwrite(body.data(), 1, body.size(), f);
    fclose(f);
    struct timeval tv[2] = {{mtime, 0}, {mtime, 0}};
    utimes(p.c_str(), tv);
    return p;
  }

  std::string dir_;
  config::OpenFileCache cfg_;
  OpenFileCache cache_;
};

std::string read_all(const http::OpenFile& f) {
  std::string s(static_cast<size_t>(f.size), '\0');
  EXPECT_EQ(pread(f.fd, s.data(), s.size(), 0), static_cast<ssize_t>(s.size()));
  return s;
}

TEST_F(OpenFileCacheTest, DirectOpenReportsFacts) {
  const std::string p = write("a.txt", "hello", 1234567);
  OpenResult r = open_file(p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.file->size, 5);
  EXPECT_EQ(r.file->mtime, 1234567);
  EXPECT_FALSE(r.file->is_dir);
  EXPECT_GE(r.file->fd, 0);
  EXPECT_EQ(read_all(*r.file), "hello");
  EXPECT_TRUE(fcntl(r.file->fd, F_GETFD) & FD_CLOEXEC);

  OpenResult d = open_file(dir_);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d.file->is_dir);
  EXPECT_EQ(d.file->fd, -1);

  EXPECT_EQ(open_file(dir_ + "/missing").err, ENOENT);
  EXPECT_EQ(open_file(p + "/x").err, ENOTDIR);
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(open_file(fifo).err, kErrNotRegularFile);
}

TEST_F(OpenFileCacheTest, DisabledCacheKeepsNothing) {
  const std::string p = write("a.txt", "hello");
  cfg_.enabled = false;
  OpenResult a = cache_.open(p, cfg_, 0);
  OpenResult b = cache_.open(p, cfg_, 1);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a.file, b.file);
  EXPECT_EQ(cache_.size(), 0u);
}

TEST_F(OpenFileCacheTest, HitReturnsTheSameOpenFile) {
  const std::string p = write("a.txt", "hello");
  OpenResult a = cache_.open(p, cfg_, 0);
  OpenResult b = cache_.open(p, cfg_, 10);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(cache_.stats().hits, 1u);
  EXPECT_EQ(cache_.stats().misses, 1u);
  EXPECT_EQ(cache_.size(), 1u);
}

TEST_F(OpenFileCacheTest, RevalidatesAfterValidAndReopensChangedFiles) {
  const std::string p = write("a.txt", "hello");
  OpenResult a = cache_.open(p, cfg_, 0);
  write("a.txt", "hello, world", 1700000100);
  // Within `valid` the cached facts are trusted.
  OpenResult b = cache_.open(p, cfg_, 500);
  EXPECT_EQ(b.file, a.file);
  EXPECT_EQ(b.file->size, 5);
  // After it, the change is seen.
  OpenResult c = cache_.open(p, cfg_, 1500);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c.file, a.file);
  EXPECT_EQ(c.file->size, 12);
  EXPECT_EQ(c.file->mtime, 1700000100);
  EXPECT_EQ(cache_.stats().revalidations, 1u);
  EXPECT_EQ(cache_.stats().reopens, 1u);
  // The old descriptor stays usable for a response still holding it.
  EXPECT_GE(fcntl(a.file->fd, F_GETFD), 0);
  // Unchanged after another `valid`: same entry, one more revalidation.
  OpenResult d = cache_.open(p, cfg_, 3000);
  EXPECT_EQ(d.file, c.file);
  EXPECT_EQ(cache_.stats().revalidations, 2u);
}

TEST_F(OpenFileCacheTest, ReplacedFileIsNoticedByInode) {
  const std::string p = write("a.txt", "aaaaa");
  OpenResult a = cache_.open(p, cfg_, 0);
  const std::string q = write("b.txt", "bbbbb");  // same size and mtime
  ASSERT_EQ(rename(q.c_str(), p.c_str()), 0);
  OpenResult b = cache_.open(p, cfg_, 2000);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(a.file, b.file);
  EXPECT_EQ(read_all(*b.file), "bbbbb");
  EXPECT_EQ(read_all(*a.file), "aaaaa");
}

TEST_F(OpenFileCacheTest, DeletedFileIsNoticed) {
  const std::string p = write("a.txt", "aaaaa");
  ASSERT_TRUE(cache_.open(p, cfg_, 0).ok());
  ASSERT_EQ(unlink(p.c_str()), 0);
  EXPECT_TRUE(cache_.open(p, cfg_, 100).ok());  // still trusted
  OpenResult r = cache_.open(p, cfg_, 1100);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.err, ENOENT);
  EXPECT_EQ(cache_.size(), 0u);  // errors aren't cached here
}

TEST_F(OpenFileCacheTest, InactiveEntriesExpire) {
  cfg_.valid = config::Ms(100'000);
  const std::string a = write("a.txt", "a");
  const std::string b = write("b.txt", "b");
  cache_.open(a, cfg_, 0);
  cache_.open(b, cfg_, 9'000);
  EXPECT_EQ(cache_.size(), 2u);
  cache_.open(b, cfg_, 10'500);  // a unused for 10.5 s > inactive
  EXPECT_EQ(cache_.size(), 1u);
  EXPECT_EQ(cache_.stats().evictions, 1u);
  const uint64_t misses = cache_.stats().misses;
  cache_.open(a, cfg_, 10'600);
  EXPECT_EQ(cache_.stats().misses, misses + 1);
}

TEST_F(OpenFileCacheTest, LeastRecentlyUsedGoesFirst) {
  cfg_.max = 2;
  const std::string a = write("a.txt", "a");
  const std::string b = write("b.txt", "b");
  const std::string c = write("c.txt", "c");
  OpenResult fa = cache_.open(a, cfg_, 0);
  OpenResult fb = cache_.open(b, cfg_, 1);
  cache_.open(a, cfg_, 2);  // a is now the most recent
  cache_.open(c, cfg_, 3);  // evicts b
  EXPECT_EQ(cache_.size(), 2u);
  EXPECT_EQ(cache_.open(a, cfg_, 4).file, fa.file);
  EXPECT_NE(cache_.open(b, cfg_, 5).file, fb.file);
}

TEST_F(OpenFileCacheTest, ErrorsAreCachedWhenAsked) {
  cfg_.errors = true;
  const std::string p = dir_ + "/later.txt";
  EXPECT_EQ(cache_.open(p, cfg_, 0).err, ENOENT);
  EXPECT_EQ(cache_.size(), 1u);
  write("later.txt", "now");
  EXPECT_EQ(cache_.open(p, cfg_, 500).err, ENOENT);  // cached error
  EXPECT_EQ(cache_.stats().hits, 1u);
  OpenResult r = cache_.open(p, cfg_, 1500);  // revalidated
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.file->size, 3);
  EXPECT_EQ(cache_.open(p, cfg_, 1600).file, r.file);
}

TEST_F(OpenFileCacheTest, ErrorsAreNotCachedByDefault) {
  const std::string p = dir_ + "/later.txt";
  EXPECT_EQ(cache_.open(p, cfg_, 0).err, ENOENT);
  EXPECT_EQ(cache_.size(), 0u);
  write("later.txt", "now");
  EXPECT_TRUE(cache_.open(p, cfg_, 1).ok());
}

TEST_F(OpenFileCacheTest, MinUsesDelaysKeepingTheDescriptor) {
  cfg_.min_uses = 3;
  const std::string p = write("a.txt", "a");
  OpenResult r1 = cache_.open(p, cfg_, 0);
  OpenResult r2 = cache_.open(p, cfg_, 1);
  EXPECT_NE(r1.file, r2.file);
  OpenResult r3 = cache_.open(p, cfg_, 2);  // third use: now kept
  OpenResult r4 = cache_.open(p, cfg_, 3);
  EXPECT_NE(r3.file, r2.file);
  EXPECT_EQ(r4.file, r3.file);
  EXPECT_EQ(cache_.stats().hits, 1u);
}

TEST_F(OpenFileCacheTest, ClearDropsEverything) {
  const std::string p = write("a.txt", "a");
  cache_.open(p, cfg_, 0);
  cache_.clear();
  EXPECT_EQ(cache_.size(), 0u);
  EXPECT_TRUE(cache_.open(p, cfg_, 1).ok());
  EXPECT_EQ(cache_.size(), 1u);
}

TEST_F(OpenFileCacheTest, KeptSmallFilesHoldTheirBytes) {
  const std::string p = write("a.txt", "hello");
  EXPECT_FALSE(open_file(p).file->has_content());  // no cache, no copy
  OpenResult a = cache_.open(p, cfg_, 0);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(std::string_view(a.file->content), "hello");
  EXPECT_EQ(cache_.stats().content_bytes, 5u);
  // A changed file's bytes are replaced with the file.
  write("a.txt", "hello, world", 1700000100);
  OpenResult b = cache_.open(p, cfg_, 1500);
  EXPECT_EQ(std::string_view(b.file->content), "hello, world");
  EXPECT_EQ(std::string_view(a.file->content), "hello");  // a response in flight keeps what it had
  EXPECT_EQ(cache_.stats().content_bytes, 12u);
  cache_.open(write("empty.txt", ""), cfg_, 1500);
  EXPECT_EQ(cache_.stats().content_bytes, 12u);
  cache_.clear();
  EXPECT_EQ(cache_.stats().content_bytes, 0u);
}

TEST_F(OpenFileCacheTest, OnlySmallFilesAndOnlyKeptOnesAreRead) {
  const std::string small = write("small", std::string(OpenFileCache::kMaxContentBytes, 's'));
  const std::string big = write("big", std::string(OpenFileCache::kMaxContentBytes + 1, 'b'));
  EXPECT_TRUE(cache_.open(small, cfg_, 0).file->has_content());
  EXPECT_FALSE(cache_.open(big, cfg_, 0).file->has_content());
  EXPECT_EQ(cache_.stats().content_bytes, OpenFileCache::kMaxContentBytes);
  // Below min_uses the descriptor is not kept, so neither are the bytes.
  cfg_.min_uses = 2;
  const std::string p = write("a.txt", "a");
  EXPECT_FALSE(cache_.open(p, cfg_, 1).file->has_content());
  EXPECT_TRUE(cache_.open(p, cfg_, 2).file->has_content());
}

TEST_F(OpenFileCacheTest, HeldBytesStayWithinTheBudgetAndLeaveWithTheirEntries) {
  const size_t n = OpenFileCache::kContentBudget / OpenFileCache::kMaxContentBytes;
  cfg_.max = n + 10;
  const std::string body(OpenFileCache::kMaxContentBytes, 'x');
  for (size_t i = 0; i < n; ++i) EXPECT_TRUE(cache_.open(write("f" + std::to_string(i), body), cfg_, 0).file->has_content());
  EXPECT_EQ(cache_.stats().content_bytes, OpenFileCache::kContentBudget);
  OpenResult over = cache_.open(write("over", "tiny"), cfg_, 0);
  ASSERT_TRUE(over.ok());
  EXPECT_FALSE(over.file->has_content());  // served from its descriptor
  EXPECT_EQ(read_all(*over.file), "tiny");
  // Entries that leave give their bytes back.
  OpenResult again = cache_.open(dir_ + "/f0", cfg_, 20'000);  // all others inactive: expired
  EXPECT_EQ(cache_.stats().content_bytes, OpenFileCache::kMaxContentBytes);
  EXPECT_TRUE(again.file->has_content());
}

}  // namespace
}  // namespace torii::handlers
