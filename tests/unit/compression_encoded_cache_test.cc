#include <gtest/gtest.h>

#include "modules/compression/encoded_cache.h"

namespace torii::compression {
namespace {

// An OpenFile is not copied (it owns its descriptor and bytes): tests
// hold one through a shared_ptr as the server does.
std::shared_ptr<http::OpenFile> file_version(uint64_t inode, int64_t mtime, int64_t size) {
  auto f = std::make_shared<http::OpenFile>();
  f->inode = inode;
  f->mtime = mtime;
  f->size = size;
  return f;
}

TEST(EncodedCache, HitPerPathCodingAndLevel) {
  EncodedCache cache;
  auto f = file_version(1, 100, 5000);
  cache.store("/www/a.html", Coding::gzip, 1, *f, std::make_shared<std::string>("gz1"));
  ASSERT_NE(cache.find("/www/a.html", Coding::gzip, 1, *f), nullptr);
  EXPECT_EQ(*cache.find("/www/a.html", Coding::gzip, 1, *f), "gz1");
  EXPECT_EQ(cache.find("/www/a.html", Coding::gzip, 5, *f), nullptr);
  EXPECT_EQ(cache.find("/www/a.html", Coding::br, 1, *f), nullptr);
  EXPECT_EQ(cache.find("/www/b.html", Coding::gzip, 1, *f), nullptr);
}

TEST(EncodedCache, ChangedFileDropsTheEntry) {
  EncodedCache cache;
  auto f = file_version(1, 100, 5000);
  cache.store("/www/a.html", Coding::gzip, 1, *f, std::make_shared<std::string>("old"));
  EXPECT_EQ(cache.find("/www/a.html", Coding::gzip, 1, *file_version(1, 101, 5000)), nullptr);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  cache.store("/www/a.html", Coding::gzip, 1, *f, std::make_shared<std::string>("old"));
  EXPECT_EQ(cache.find("/www/a.html", Coding::gzip, 1, *file_version(2, 100, 5000)), nullptr);  // replaced file
  cache.store("/www/a.html", Coding::gzip, 1, *f, std::make_shared<std::string>("old"));
  EXPECT_EQ(cache.find("/www/a.html", Coding::gzip, 1, *file_version(1, 100, 5001)), nullptr);
}

TEST(EncodedCache, BoundedLeastRecentlyUsedFirstOut) {
  EncodedCache cache;
  const size_t piece = EncodedCache::kBudget / 4;  // the largest entry kept
  auto f = file_version(1, 1, 1);
  for (int i = 0; i < 4; ++i)
    cache.store("/f" + std::to_string(i), Coding::gzip, 1, *f, std::make_shared<std::string>(piece, 'x'));
  EXPECT_EQ(cache.size(), 4u);
  ASSERT_NE(cache.find("/f0", Coding::gzip, 1, *f), nullptr);  // now the most recent
  cache.store("/f4", Coding::gzip, 1, *f, std::make_shared<std::string>(piece, 'y'));
  EXPECT_LE(cache.bytes(), EncodedCache::kBudget);
  EXPECT_NE(cache.find("/f0", Coding::gzip, 1, *f), nullptr);
  EXPECT_EQ(cache.find("/f1", Coding::gzip, 1, *f), nullptr);  // the least recently used went
  // Too large to keep at all.
  cache.store("/big", Coding::gzip, 1, *f, std::make_shared<std::string>(piece + 1, 'z'));
  EXPECT_EQ(cache.find("/big", Coding::gzip, 1, *f), nullptr);
}

}  // namespace
}  // namespace torii::compression
