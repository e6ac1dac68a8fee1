#include "modules/ssi/expression.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace torii::ssi {
namespace {

const std::map<std::string, std::string> kVars = {{"a", "one"}, {"b", "two words"}, {"empty", ""}, {"x_1", "X"}};

bool lookup(std::string_view name, std::string& value) {
  auto it = kVars.find(std::string(name));
  if (it == kVars.end()) return false;
  value = it->second;
  return true;
}

std::string eval(std::string_view text) {
  std::string out, error;
  if (!evaluate(text, lookup, out, error)) return "ERROR: " + error;
  return out;
}

bool cond(std::string_view expr, Match* m = nullptr) {
  bool result = false;
  Match match;
  std::string error;
  EXPECT_TRUE(evaluate_condition(expr, lookup, result, match, error)) << expr << ": " << error;
  if (m) *m = match;
  return result;
}

TEST(SsiExpression, Variables) {
  EXPECT_EQ(eval("a=$a, b=${b}!, $A$x_1 $nope."), "a=one, b=two words!, oneX .");
  EXPECT_EQ(eval("${a}b"), "oneb");
  EXPECT_EQ(eval("$"), "ERROR: invalid variable name in \"$\"");
  EXPECT_EQ(eval("${a"), "ERROR: the closing bracket in \"a\" variable is missing");
}

TEST(SsiExpression, Escapes) {
  EXPECT_EQ(eval(R"(\$a \\ \" \' \n)"), R"($a \ " ' \n)");
}

TEST(SsiExpression, Conditions) {
  EXPECT_TRUE(cond("$a"));
  EXPECT_FALSE(cond("$empty"));
  EXPECT_FALSE(cond("$nope"));
  EXPECT_TRUE(cond("$a = one"));
  EXPECT_FALSE(cond("$a = two"));
  EXPECT_TRUE(cond("$a != two"));
  EXPECT_TRUE(cond("$A=one"));
  EXPECT_TRUE(cond("${x_1} = X"));
  EXPECT_TRUE(cond("$a = \\/x") == false);
  Match m;
  EXPECT_TRUE(cond("$b = /^(\\w+) (?<second>\\w+)\\$/", &m));
  ASSERT_EQ(m.groups.size(), 3u);
  EXPECT_EQ(m.groups[1], "two");
  ASSERT_EQ(m.named.size(), 1u);
  EXPECT_EQ(m.named[0].first, "second");
  EXPECT_EQ(m.named[0].second, "words");
  EXPECT_TRUE(cond("$b != /^one/"));
}

TEST(SsiExpression, InvalidConditions) {
  bool result;
  Match m;
  std::string error;
  EXPECT_FALSE(evaluate_condition("$a ~ one", lookup, result, m, error));
  EXPECT_EQ(error, "invalid expression in \"$a ~ one\"");
  EXPECT_FALSE(evaluate_condition("$a = /one", lookup, result, m, error));
  EXPECT_FALSE(evaluate_condition("$a = /(/", lookup, result, m, error));
}

TEST(SsiExpression, Encodings) {
  EXPECT_EQ(entity_encode("<a href=\"x\">&amp;</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;amp;&lt;/a&gt;");
  EXPECT_EQ(url_encode("a b/c?d=e&f<\"%\xff"), "a%20b/c?d=e&f%3C%22%25%FF");
}

}  // namespace
}  // namespace torii::ssi
