#include "http2/response_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace torii::http2 {
namespace {

TEST(Http2ResponseFields, ConnectionSpecificFieldsAreDroppedInAnyCase) {
  for (const char* name : {"Connection", "keep-alive", "Proxy-Connection", "TRANSFER-ENCODING", "Upgrade",
                           "content-length"})
    EXPECT_TRUE(dropped_in_h2(name)) << name;
  for (const char* name : {"Content-Type", "connections", "upgrade-insecure-requests", "te", ""})
    EXPECT_FALSE(dropped_in_h2(name)) << name;
}

TEST(Http2ResponseFields, NamesAreVisibleAsciiWithoutAColon) {
  EXPECT_TRUE(safe_name("X-Frame-Options"));
  EXPECT_TRUE(safe_name("a!#$%&'*+-.^_`|~z"));
  EXPECT_FALSE(safe_name(""));
  EXPECT_FALSE(safe_name(":status"));
  EXPECT_FALSE(safe_name("bad name"));
  EXPECT_FALSE(safe_name("tab\there"));
  EXPECT_FALSE(safe_name("del\x7f"));
  EXPECT_FALSE(safe_name("high\x80"));
  EXPECT_FALSE(safe_name(std::string("nul\0x", 5)));
}

// Every position of a bad byte, in values of every length up to three
// eight-byte steps and a tail, so the step and the tail are both seen to check.
TEST(Http2ResponseFields, ValuesWithCrLfOrNulAnywhereAreRefused) {
  for (size_t len = 0; len <= 27; ++len) {
    std::string v(len, 'a');
    EXPECT_TRUE(safe_value(v)) << len;
    for (size_t at = 0; at < len; ++at) {
      for (char bad : {'\r', '\n', '\0'}) {
        std::string w = v;
        w[at] = bad;
        EXPECT_FALSE(safe_value(w)) << "length " << len << " at " << at << " byte " << int(bad);
      }
    }
  }
  // Bytes next to the refused ones, and high bytes, are fine.
  EXPECT_TRUE(safe_value("\x0b\x0c\x0e\x09\x01\x80\xff\x8d\x8a text after the eight"));
}

}  // namespace
}  // namespace torii::http2
