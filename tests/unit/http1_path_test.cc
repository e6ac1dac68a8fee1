#include <gtest/gtest.h>

#include <string>

#include "http1/parser.h"

namespace torii::http1 {
namespace {

struct Case {
  const char* raw;
  const char* want;  // nullptr: refused
};

void check(const Case& c, bool merge_slashes) {
  std::string out = "stale";
  const bool ok = normalize_path(c.raw, merge_slashes, out);
  if (c.want == nullptr) {
    EXPECT_FALSE(ok) << c.raw << " gave " << out;
  } else {
    EXPECT_TRUE(ok) << c.raw;
    EXPECT_EQ(out, c.want) << c.raw;
  }
}

TEST(Http1Path, NormalisesWithMergedSlashes) {
  const Case cases[] = {
      {"/", "/"},
      {"/a", "/a"},
      {"/a/", "/a/"},
      {"/a/b/c", "/a/b/c"},
      {"//", "/"},
      {"//a///b//", "/a/b/"},
      {"/./", "/"},
      {"/.", "/"},
      {"/a/.", "/a/"},
      {"/a/./b", "/a/b"},
      {"/a/..", "/"},
      {"/a/../", "/"},
      {"/a/b/..", "/a/"},
      {"/a/b/../c", "/a/c"},
      {"/a/b/../../c", "/c"},
      {"/a/./b/./../c/.", "/a/c/"},
      {"/a//../b", "/b"},
      {"/...", "/..."},
      {"/a/.../b", "/a/.../b"},
      {"/.a/..b/c.", "/.a/..b/c."},
      {"/a%20b", "/a b"},
      {"/%41%62%63", "/Abc"},
      {"/a%2fb", "/a/b"},
      {"/a%2F%2Fb", "/a/b"},
      {"/%2e/a", "/a"},
      {"/a/%2e%2e/b", "/b"},
      {"/a/%2E%2e", "/"},
      {"/a/.%2e/b", "/b"},
      {"/a%2f..%2fb", "/b"},
      {"/%25", "/%"},
      {"/%252e%252e/x", "/%2e%2e/x"},
      {"/%23x", "/#x"},
      {"/caf\xc3\xa9", "/caf\xc3\xa9"},
      {"/%c3%a9", "/\xc3\xa9"},
      {"/a?b", "/a?b"},  // the caller has split the query off already
      {"/..", nullptr},
      {"/../", nullptr},
      {"/../a", nullptr},
      {"/a/../..", nullptr},
      {"/a/../../b", nullptr},
      {"/./..", nullptr},
      {"/%2e%2e", nullptr},
      {"/%2E%2E/x", nullptr},
      {"/a%2f..%2f..", nullptr},
      {"/%00", nullptr},
      {"/a%0", nullptr},
      {"/a%", nullptr},
      {"/a%g0", nullptr},
      {"/a%0g", nullptr},
      {"", nullptr},
      {"a/b", nullptr},
      {"%2fa", nullptr},
  };
  for (const Case& c : cases) check(c, true);
}

TEST(Http1Path, KeepsSlashesWhenNotMerging) {
  const Case cases[] = {
      {"//", "//"},
      {"//a///b", "//a///b"},
      {"/a//", "/a//"},
      {"/a//../b", "/a/b"},
      {"/a/.//b", "/a//b"},
      {"/a%2f%2fb", "/a//b"},
      {"/..", nullptr},
  };
  for (const Case& c : cases) check(c, false);
}

TEST(Http1Path, ReusesOutput) {
  std::string out;
  ASSERT_TRUE(normalize_path("/a/long/path/that/does/not/fit/small/storage", true, out));
  ASSERT_TRUE(normalize_path("/b", true, out));
  EXPECT_EQ(out, "/b");
}

}  // namespace
}  // namespace torii::http1
