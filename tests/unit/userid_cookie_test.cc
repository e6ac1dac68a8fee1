#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "modules/userid/uid_cookie.h"

namespace torii::userid {
namespace {

// A cookie nginx set for `userid on` on 127.0.0.1 (x86).
constexpr const char* kNginxCookie = "fwAAAWbSkR8D0CksAwMEAg==";

TEST(UseridCookie, DecodesNginxCookieAsNginxPrintsIt) {
  uint32_t uid[4];
  ASSERT_TRUE(decode_uid(kNginxCookie, uid));
  std::string text;
  append_uid_text("uid", uid, text);
  EXPECT_EQ(text, "uid=0100007F1F91D2662C29D00302040303");
}

TEST(UseridCookie, EncodeRoundTrips) {
  uint32_t uid[4];
  ASSERT_TRUE(decode_uid(kNginxCookie, uid));
  std::string out;
  encode_uid(uid, out);
  EXPECT_EQ(out, kNginxCookie);
}

TEST(UseridCookie, ReadsOnlyTwentyTwoCharacters) {
  uint32_t a[4];
  uint32_t b[4];
  ASSERT_TRUE(decode_uid("fwAAAWbSkR8D0CksAwMEAgZ=", a));  // marked with Z
  ASSERT_TRUE(decode_uid(kNginxCookie, b));
  EXPECT_EQ(std::memcmp(a, b, sizeof a), 0);
}

TEST(UseridCookie, RefusesShortOrNonBase64) {
  uint32_t uid[4];
  EXPECT_FALSE(decode_uid("fwAAAWbSkR8D0CksAwME", uid));
  EXPECT_FALSE(decode_uid("fwAAAWbSkR8D0Cks*wMEAg==", uid));
}

TEST(UseridCookie, CookieTimeUsesTwoDigitYearsUpTo2037) {
  std::string out;
  append_cookie_time(2145916555, out);
  EXPECT_EQ(out, "Thu, 31-Dec-37 23:55:55 GMT");
  out.clear();
  append_cookie_time(int64_t{2145916555} + 86400 * 365, out);
  EXPECT_EQ(out, "Fri, 31-Dec-2038 23:55:55 GMT");
}

}  // namespace
}  // namespace torii::userid
