#include "upstream/scgi/netstring.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace torii::upstream::scgi {
namespace {

TEST(ScgiNetstring, ContentLengthFirstThenThePairsInOneNetstring) {
  HeadBuilder head(12);
  head.add("SCGI", "1");
  head.add("EMPTY", "");
  std::string out = "before";
  head.finish(out);
  const std::string pairs = std::string("CONTENT_LENGTH\0" "12\0" "SCGI\0" "1\0" "EMPTY\0\0", 32);
  EXPECT_EQ(out, "before" + std::to_string(pairs.size()) + ":" + pairs + ",");

  std::vector<std::pair<std::string, std::string>> seen;
  size_t consumed = 0;
  ASSERT_TRUE(parse_head(std::string_view(out).substr(6), consumed,
                         [&](std::string_view n, std::string_view v) { seen.emplace_back(n, v); }));
  EXPECT_EQ(consumed, out.size() - 6);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], (std::pair<std::string, std::string>{"CONTENT_LENGTH", "12"}));
  EXPECT_EQ(seen[2], (std::pair<std::string, std::string>{"EMPTY", ""}));
}

TEST(ScgiNetstring, NoBodyIsALengthOfZero) {
  std::string out;
  HeadBuilder(-1).finish(out);
  EXPECT_EQ(out, std::string("17:CONTENT_LENGTH\0" "0\0,", 21));
}

TEST(ScgiNetstring, MalformedHeadsAreRefused) {
  size_t consumed = 0;
  auto none = [](std::string_view, std::string_view) {};
  EXPECT_FALSE(parse_head("", consumed, none));
  EXPECT_FALSE(parse_head(std::string_view("4:A\0B\0", 6), consumed, none));             // no ','
  EXPECT_FALSE(parse_head(std::string_view("3:A\0B,", 6), consumed, none));  // a name without its value's end
  EXPECT_FALSE(parse_head("x:,", consumed, none));
}

}  // namespace
}  // namespace torii::upstream::scgi
