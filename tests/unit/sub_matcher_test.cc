#include "modules/sub/sub_matcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torii::sub {
namespace {

void tag(size_t index, std::string& out) { out += "<" + std::to_string(index) + ">"; }

// Feeds `pieces` one after the other and returns everything that came out,
// with what came out after each piece in `steps`.
std::string run(Matcher& m, const std::vector<std::string>& pieces, std::vector<std::string>* steps = nullptr) {
  std::string all;
  for (const auto& p : pieces) {
    std::string out;
    m.feed(p, out, tag);
    if (steps) steps->push_back(out);
    all += out;
  }
  std::string out;
  m.finish(out);
  return all + out;
}

TEST(SubMatcher, CaseInsensitiveAndOncePerString) {
  Matcher m({"hello", "world"}, true);
  EXPECT_EQ(run(m, {"Hello World, hello WORLD"}), "<0> <1>, hello WORLD");
  EXPECT_TRUE(m.exhausted());
}

TEST(SubMatcher, EveryOccurrenceWithoutOnce) {
  Matcher m({"ab"}, false);
  EXPECT_EQ(run(m, {"abab xab AB"}), "<0><0> x<0> <0>");
}

TEST(SubMatcher, MatchAcrossPiecesHoldsOnlyThePossibleStart) {
  Matcher m({"world"}, false);
  std::vector<std::string> steps;
  EXPECT_EQ(run(m, {"hello wo", "r", "ld!"}, &steps), "hello <0>!");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0], "hello ");
  EXPECT_EQ(steps[1], "");
  EXPECT_EQ(steps[2], "<0>!");
}

TEST(SubMatcher, HeldBytesThatDoNotMatchGoOut) {
  Matcher m({"world"}, false);
  std::vector<std::string> steps;
  EXPECT_EQ(run(m, {"wor", "th it"}, &steps), "worth it");
  EXPECT_EQ(steps[0], "");
  EXPECT_EQ(steps[1], "worth it");
}

TEST(SubMatcher, FirstWrittenWinsAndAnEarlierPartialWaits) {
  Matcher first({"ab", "abc"}, false);
  EXPECT_EQ(run(first, {"abcd"}), "<0>cd");
  // "abc" is tried first and could still match: "ab" waits for it.
  Matcher waits({"abc", "ab"}, false);
  std::vector<std::string> steps;
  EXPECT_EQ(run(waits, {"xab", "d"}, &steps), "x<1>d");
  EXPECT_EQ(steps[0], "x");
}

TEST(SubMatcher, BodyEndingInsideAPossibleMatchIsKept) {
  Matcher m({"hello"}, false);
  EXPECT_EQ(run(m, {"say hel"}), "say hel");
  EXPECT_EQ(m.held(), 0u);
}

TEST(SubMatcher, AfterEveryStringIsReplacedTheRestPasses) {
  Matcher m({"a"}, true);
  std::vector<std::string> steps;
  EXPECT_EQ(run(m, {"xa", "aaa"}, &steps), "x<0>aaa");
  EXPECT_EQ(steps[1], "aaa");
}

TEST(SubMatcher, NonAsciiBytesCompareExactly) {
  Matcher m({"\xc3\xa9t\xc3\xa9"}, false);
  EXPECT_EQ(run(m, {"\xc3\x89T\xc3\x89 \xc3\xa9T\xc3\xa9"}), "\xc3\x89T\xc3\x89 <0>");
}

}  // namespace
}  // namespace torii::sub
