#include <gtest/gtest.h>

#include "modules/admin_api/json.h"

namespace torii::admin_api {
namespace {

TEST(AdminJson, ReadsAnObjectWithEveryKindOfValue) {
  auto v = parse_json(R"( {"s":"a\"b\u00e9\ud83d\ude00","n":-1.5e3,"t":true,"f":false,"z":null,"a":[1,{}]} )");
  ASSERT_TRUE(v) << v.error();
  ASSERT_EQ(v->type, JsonValue::Type::object);
  ASSERT_EQ(v->members.size(), 6u);
  EXPECT_EQ(v->members[0].value.text, "a\"b\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(v->members[1].value.text, "-1.5e3");
  EXPECT_TRUE(v->members[2].value.boolean);
  EXPECT_EQ(v->members[4].value.type, JsonValue::Type::null);
  EXPECT_EQ(v->members[5].value.items.size(), 2u);
}

TEST(AdminJson, RefusesWhatRfc8259Refuses) {
  for (const char* bad : {"", " ", "{", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "01", "1.", ".5", "-", "+1", "1e",
                          "tru", "nul", "\"\\x\"", "\"a", "\"\t\"", "{\"a\":1}x", "{'a':1}", "/* c */ 1",
                          "\"\\ud800\"", "\"\\udc00\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xff\"",
                          "{\"a\":1,\"a\":2}", "NaN", "[1] [2]"}) {
    EXPECT_FALSE(parse_json(bad)) << bad;
  }
}

TEST(AdminJson, LimitsNesting) {
  EXPECT_TRUE(parse_json(std::string(30, '[') + std::string(30, ']')));
  EXPECT_FALSE(parse_json(std::string(100, '[') + std::string(100, ']')));
  EXPECT_FALSE(parse_json(std::string(100000, '[')));
}

TEST(AdminJson, WritesStringsItReadsBack) {
  std::string out;
  append_json_string(out, std::string("q\"\\\n\x01\xc3\xa9", 7));
  EXPECT_EQ(out, "\"q\\\"\\\\\\u000a\\u0001\xc3\xa9\"");
  auto v = parse_json(out);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->text, std::string("q\"\\\n\x01\xc3\xa9", 7));
}

}  // namespace
}  // namespace torii::admin_api
