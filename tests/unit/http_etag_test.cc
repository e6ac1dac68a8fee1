#include "http/etag.h"

#include <gtest/gtest.h>

namespace torii::http {
namespace {

TEST(HttpEtag, NginxStyleFormat) {
  EXPECT_EQ(make_etag(0x5f2b1a3c, 20000), "\"5f2b1a3c-4e20\"");
  EXPECT_EQ(make_etag(0, 0), "\"0-0\"");
  EXPECT_EQ(make_etag(INT64_MAX, INT64_MAX), "\"7fffffffffffffff-7fffffffffffffff\"");
  EXPECT_EQ(make_etag(INT64_MAX, INT64_MAX).size(), kMaxEtagLen);
}

TEST(HttpEtag, IfNoneMatchUsesWeakComparison) {
  const std::string tag = "\"5f2b1a3c-4e20\"";
  EXPECT_TRUE(none_match_hits("\"5f2b1a3c-4e20\"", tag));
  EXPECT_TRUE(none_match_hits("W/\"5f2b1a3c-4e20\"", tag));
  EXPECT_TRUE(none_match_hits("\"a\", W/\"b\" ,\t\"5f2b1a3c-4e20\"", tag));
  EXPECT_TRUE(none_match_hits("*", tag));
  EXPECT_TRUE(none_match_hits("*", ""));
  EXPECT_FALSE(none_match_hits("\"5f2b1a3c-4e21\"", tag));
  EXPECT_FALSE(none_match_hits("5f2b1a3c-4e20", tag));  // unquoted: malformed
  EXPECT_FALSE(none_match_hits("\"5f2b1a3c-4e20", tag));
  EXPECT_FALSE(none_match_hits("", tag));
  EXPECT_FALSE(none_match_hits("\"x\"", ""));
  EXPECT_FALSE(none_match_hits("\"\"", ""));
  // A weak tag of ours still matches weakly.
  EXPECT_TRUE(none_match_hits("\"abc\"", "W/\"abc\""));
}

TEST(HttpEtag, IfMatchUsesStrongComparison) {
  const std::string tag = "\"5f2b1a3c-4e20\"";
  EXPECT_TRUE(match_hits_strong("\"5f2b1a3c-4e20\"", tag));
  EXPECT_TRUE(match_hits_strong("\"x\", \"5f2b1a3c-4e20\"", tag));
  EXPECT_TRUE(match_hits_strong("*", tag));
  EXPECT_FALSE(match_hits_strong("W/\"5f2b1a3c-4e20\"", tag));
  EXPECT_FALSE(match_hits_strong("\"abc\"", "W/\"abc\""));
  EXPECT_FALSE(match_hits_strong("\"x\"", tag));
  EXPECT_FALSE(match_hits_strong("\"x\" junk, \"5f2b1a3c-4e20\"", tag));
  EXPECT_FALSE(match_hits_strong("\"x\"", ""));
}

}  // namespace
}  // namespace torii::http
