// How long an upstream response may be stored: nginx's order of
// X-Accel-Expires, Cache-Control, Expires, then proxy_cache_valid.
#include "cache/freshness.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "config/proxy_config.h"

namespace torii::cache {
namespace {

constexpr int64_t kNow = 1'700'000'000;

http1::ParsedResponse response(int status, std::vector<std::pair<std::string_view, std::string_view>> fields) {
  http1::ParsedResponse r;
  r.status = status;
  for (auto& [n, v] : fields) r.headers.push_back(http::Header{n, v});
  return r;
}

config::CacheSettings valid_10m() {
  config::CacheSettings s;
  s.valid.push_back(config::CacheValid{{200}, false, 600});
  return s;
}

TEST(CacheFreshness, ProxyCacheValidWhenTheUpstreamSaysNothing) {
  auto f = judge(response(200, {}), valid_10m(), kNow);
  EXPECT_TRUE(f.cacheable);
  EXPECT_EQ(f.valid_sec, kNow + 600);
  EXPECT_FALSE(judge(response(404, {}), valid_10m(), kNow).cacheable);
  EXPECT_FALSE(judge(response(200, {}), config::CacheSettings{}, kNow).cacheable);
}

TEST(CacheFreshness, CacheControl) {
  auto s = valid_10m();
  EXPECT_EQ(judge(response(200, {{"Cache-Control", "max-age=30"}}), s, kNow).valid_sec, kNow + 30);
  EXPECT_EQ(judge(response(200, {{"Cache-Control", "max-age=30, s-maxage=90"}}), s, kNow).valid_sec, kNow + 90);
  EXPECT_FALSE(judge(response(200, {{"Cache-Control", "max-age=0"}}), s, kNow).cacheable);
  EXPECT_FALSE(judge(response(200, {{"Cache-Control", "private, max-age=60"}}), s, kNow).cacheable);
  EXPECT_FALSE(judge(response(200, {{"cache-control", "No-Store"}}), s, kNow).cacheable);
  // Ignored: proxy_cache_valid decides.
  s.ignore_headers = config::kIgnoreCacheControl;
  EXPECT_EQ(judge(response(200, {{"Cache-Control", "no-store"}}), s, kNow).valid_sec, kNow + 600);
  auto f = judge(response(200, {{"Cache-Control", "max-age=5, stale-while-revalidate=7, stale-if-error=9"}}), valid_10m(),
                 kNow);
  EXPECT_EQ(f.stale_while_revalidate, 7);
  EXPECT_EQ(f.stale_if_error, 9);
}

TEST(CacheFreshness, XAccelExpiresWinsAndExpiresComesLast) {
  auto s = valid_10m();
  EXPECT_EQ(judge(response(200, {{"Cache-Control", "no-cache"}, {"X-Accel-Expires", "20"}}), s, kNow).valid_sec,
            kNow + 20);
  EXPECT_FALSE(judge(response(200, {{"X-Accel-Expires", "0"}, {"Cache-Control", "max-age=60"}}), s, kNow).cacheable);
  EXPECT_EQ(judge(response(200, {{"X-Accel-Expires", "@1700000100"}}), s, kNow).valid_sec, 1'700'000'100);
  EXPECT_EQ(judge(response(200, {{"Expires", "Tue, 14 Nov 2023 22:13:20 GMT"}}), s, kNow).cacheable, false);
  EXPECT_EQ(judge(response(200, {{"Expires", "Thu, 01 Jan 2037 00:00:00 GMT"}}), s, kNow).valid_sec, 2114380800);
  EXPECT_EQ(judge(response(200, {{"Expires", "Thu, 01 Jan 2037 00:00:00 GMT"}, {"Cache-Control", "max-age=5"}}), s,
                  kNow)
                .valid_sec,
            kNow + 5);
}

TEST(CacheFreshness, SetCookieAndVaryStar) {
  auto s = valid_10m();
  EXPECT_FALSE(judge(response(200, {{"Set-Cookie", "a=b"}}), s, kNow).cacheable);
  EXPECT_FALSE(judge(response(200, {{"Vary", "*"}}), s, kNow).cacheable);
  auto f = judge(response(200, {{"Vary", "Accept-Encoding"}, {"Vary", "Accept-Language"}}), s, kNow);
  EXPECT_TRUE(f.cacheable);
  EXPECT_EQ(f.vary, "Accept-Encoding, Accept-Language");
  s.ignore_headers = config::kIgnoreSetCookie | config::kIgnoreVary;
  EXPECT_TRUE(judge(response(200, {{"Set-Cookie", "a=b"}, {"Vary", "*"}}), s, kNow).cacheable);
}

}  // namespace
}  // namespace torii::cache
