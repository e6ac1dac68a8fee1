// The upstream's X-Accel-* fields as the proxy reads them, and
// proxy_ignore_headers turning each off.
#include <gtest/gtest.h>

#include "config/proxy_config.h"
#include "handlers/proxy_headers.h"
#include "http1/response_parser.h"

namespace torii::handlers {
namespace {

http1::ParsedResponse response(std::vector<std::pair<std::string_view, std::string_view>> fields) {
  http1::ParsedResponse r;
  r.status = 200;
  for (auto [name, value] : fields) r.headers.push_back({name, value});
  return r;
}

TEST(ProxyAccelHeaders, BufferingTakesYesAndNoInAnyCase) {
  config::ProxyConfig p;
  EXPECT_EQ(accel_buffering(p, response({{"X-Accel-Buffering", "no"}})), 0);
  EXPECT_EQ(accel_buffering(p, response({{"x-accel-buffering", "NO"}})), 0);
  EXPECT_EQ(accel_buffering(p, response({{"X-Accel-Buffering", "Yes"}})), 1);
  EXPECT_EQ(accel_buffering(p, response({{"X-Accel-Buffering", "off"}})), -1);
  EXPECT_EQ(accel_buffering(p, response({{"X-Other", "no"}})), -1);
}

TEST(ProxyAccelHeaders, IgnoredBufferingIsNotRead) {
  config::ProxyConfig p;
  p.ignore_headers = config::kIgnoreXAccelBuffering;
  EXPECT_EQ(accel_buffering(p, response({{"X-Accel-Buffering", "no"}})), -1);
}

TEST(ProxyAccelHeaders, RedirectTargetUnlessIgnored) {
  config::ProxyConfig p;
  const auto r = response({{"Content-Type", "text/plain"}, {"X-Accel-Redirect", "/files/a"}});
  EXPECT_EQ(accel_redirect_target(p, r), "/files/a");
  p.ignore_headers = config::kIgnoreXAccelRedirect;
  EXPECT_EQ(accel_redirect_target(p, r), "");
}

}  // namespace
}  // namespace torii::handlers
