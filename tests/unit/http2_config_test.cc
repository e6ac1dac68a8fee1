#include <gtest/gtest.h>

#include "config/config.h"
#include "config/loader.h"

namespace torii::config {
namespace {

std::shared_ptr<const Config> load_ok(const std::string& text) {
  auto r = load_from_string(text, "/p/", "");
  EXPECT_TRUE(r.ok()) << r.error();
  return r.ok() ? *r : nullptr;
}

TEST(Http2Config, DefaultsAreNginxs) {
  auto cfg = load_ok("http { server { listen 80; } }");
  ASSERT_TRUE(cfg);
  const Server& s = *cfg->servers[0];
  EXPECT_FALSE(s.http2);
  EXPECT_EQ(s.http2_settings.max_concurrent_streams, 128u);
  EXPECT_EQ(s.http2_settings.chunk_size, 8u * 1024);
  EXPECT_EQ(s.http2_settings.body_preread_size, 64u * 1024);
}

TEST(Http2Config, DirectivesAndInheritance) {
  auto cfg = load_ok(R"(http {
    http2 on;
    http2_recv_buffer_size 512k;
    http2_max_concurrent_streams 64;
    server { listen 80; http2_chunk_size 16k; http2_body_preread_size 0; }
    server { listen 81 http2; http2 off; }
  })");
  ASSERT_TRUE(cfg);
  const Server& a = *cfg->servers[0];
  EXPECT_TRUE(a.http2);
  EXPECT_EQ(a.http2_settings.max_concurrent_streams, 64u);
  EXPECT_EQ(a.http2_settings.chunk_size, 16u * 1024);
  EXPECT_EQ(a.http2_settings.body_preread_size, 0u);
  EXPECT_EQ(a.http2_settings.recv_buffer_size, 512u * 1024);
  const Server& b = *cfg->servers[1];
  EXPECT_FALSE(b.http2);
  EXPECT_TRUE(b.listens[0].http2);
}

TEST(Http2Config, ObsoleteDirectivesWarn) {
  load_warnings().clear();
  auto cfg = load_ok("http { http2_max_requests 10; server { listen 80; } }");
  ASSERT_TRUE(cfg);
  bool warned = false;
  for (const auto& w : load_warnings()) warned |= w.find("obsolete") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace torii::config
