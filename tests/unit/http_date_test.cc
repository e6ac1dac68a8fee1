#include "http/date.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <string>

namespace torii::http {
namespace {

// 1994-11-06T08:49:37Z, the RFC's example.
constexpr int64_t kRfcExample = 784111777;

class TzGuard {
 public:
  explicit TzGuard(const char* tz) {
    const char* old = getenv("TZ");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~TzGuard() {
    if (had_)
      setenv("TZ", old_.c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }

 private:
  bool had_ = false;
  std::string old_;
};

TEST(HttpDate, FormatsImfFixdate) {
  EXPECT_EQ(format_http_date(kRfcExample), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(format_http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(format_http_date(951782400), "Tue, 29 Feb 2000 00:00:00 GMT");
  EXPECT_EQ(format_http_date(4107542399), "Sun, 28 Feb 2100 23:59:59 GMT");
  EXPECT_EQ(format_http_date(-5), "Thu, 01 Jan 1970 00:00:00 GMT");  // clamped
}

TEST(HttpDate, FormatAgreesWithGmtime) {
  for (int64_t t = 0; t < 4102444800; t += 86400 * 37 + 3607) {
    time_t tt = static_cast<time_t>(t);
    struct tm tm {};
    gmtime_r(&tt, &tm);
    char expect[64];
    strftime(expect, sizeof expect, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    ASSERT_EQ(format_http_date(t), expect) << t;
    ASSERT_EQ(parse_http_date(expect), t) << expect;
  }
}

TEST(HttpDate, CachedDateFollowsTheSecond) {
  const std::string a(cached_http_date(kRfcExample));
  const std::string_view b = cached_http_date(kRfcExample);
  EXPECT_EQ(a, b);
  EXPECT_EQ(cached_http_date(kRfcExample + 1), "Sun, 06 Nov 1994 08:49:38 GMT");
  EXPECT_EQ(cached_http_date(kRfcExample), "Sun, 06 Nov 1994 08:49:37 GMT");
}

TEST(HttpDate, ParsesAllThreeFormats) {
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), kRfcExample);
  EXPECT_EQ(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), kRfcExample);
  EXPECT_EQ(parse_http_date("Sun Nov  6 08:49:37 1994"), kRfcExample);
  EXPECT_EQ(parse_http_date("Sun Nov 16 08:49:37 1994"), kRfcExample + 10 * 86400);
  // Two-digit years below 70 are this century.
  EXPECT_EQ(parse_http_date("Thursday, 01-Jan-26 00:00:00 GMT"), 1767225600);
  // Old browsers' "; length=" suffix.
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT; length=1234"), kRfcExample);
}

TEST(HttpDate, RejectsMalformedDates) {
  for (const char* bad : {"", "yesterday", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC",
                          "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 31 Nov 1994 08:49:37 GMT",
                          "Sun, 29 Feb 1900 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
                          "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 nov 1994 08:49:37 GMT",
                          "Sun, 06 Nov 1994 08:49:37 GMTx", "Xyz, 06 Nov 1994 08:49:37 GMT",
                          "Sunday, 06 Nov 1994 08:49:37 GMT", "Sun, 06-Nov-94 08:49:37 GMT",
                          "Sun Nov 6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:3"}) {
    EXPECT_FALSE(parse_http_date(bad).has_value()) << bad;
  }
  EXPECT_TRUE(parse_http_date("Tue, 29 Feb 2000 00:00:00 GMT").has_value());
}

TEST(HttpDate, LogFormatsInUtc) {
  TzGuard tz("UTC");
  // Different seconds from the other test so the per-thread cache is fresh.
  EXPECT_EQ(cached_time_local(1795993200), "29/Nov/2026:23:00:00 +0000");
  EXPECT_EQ(cached_time_iso8601(1795993200), "2026-11-29T23:00:00+00:00");
  EXPECT_EQ(cached_time_local(1795993201), "29/Nov/2026:23:00:01 +0000");
}

TEST(HttpDate, LogFormatsInOtherZones) {
  {
    TzGuard tz("EST5");
    EXPECT_EQ(cached_time_local(1795993300), "29/Nov/2026:18:01:40 -0500");
    EXPECT_EQ(cached_time_iso8601(1795993300), "2026-11-29T18:01:40-05:00");
  }
  {
    TzGuard tz("IST-5:30");
    EXPECT_EQ(cached_time_local(1795993400), "30/Nov/2026:04:33:20 +0530");
    EXPECT_EQ(cached_time_iso8601(1795993400), "2026-11-30T04:33:20+05:30");
  }
}

TEST(HttpDate, DaysFromCivil) {
  EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(days_from_civil(2000, 3, 1), 11017);
  EXPECT_EQ(days_from_civil(1969, 12, 31), -1);
}

}  // namespace
}  // namespace torii::http
