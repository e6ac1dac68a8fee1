// The request head HTTP/2 and HTTP/3 streams build from their decoded
// fields: what a handler then sees of method, target, Host, cookies and
// the body's framing, and the statuses bad sections get.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "config/loader.h"
#include "http/exchange.h"
#include "http/field_section.h"

namespace torii::http {
namespace {

class NullSink : public ResponseSink {
 public:
  void send_head(const ResponseHead&) override {}
  void send_body(std::string_view) override {}
  void send_file(std::shared_ptr<const OpenFile>, int64_t, int64_t) override {}
  void finish() override {}
};

constexpr size_t kFieldLimit = 8192, kListLimit = 16384;

class FieldSectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = config::load_from_string("http { server { listen 127.0.0.1:8080; } }", "/tmp/");
    ASSERT_TRUE(r.ok()) << r.error();
    cfg_ = *r;
    ex_.config = cfg_;
    ex_.server = cfg_->servers.front().get();
  }

  // Builds from name/value pairs; the strings outlive the exchange, as the
  // codec's buffers do.
  int build(std::vector<std::pair<std::string, std::string>> fields, int version = 30, bool had_body = false) {
    fields_ = std::move(fields);
    for (const auto& [n, v] : fields_) section_.add(n, v, kFieldLimit, kListLimit);
    return section_.build(ex_, version, had_body, reason_);
  }

  std::vector<std::pair<std::string, std::string>> fields_;
  std::shared_ptr<const config::Config> cfg_;
  NullSink sink_;
  ConnectionInfo conn_;
  WorkerServices services_;
  Exchange ex_{sink_, conn_, services_};
  FieldSection section_;
  std::string reason_;
};

TEST_F(FieldSectionTest, PseudoHeadersBecomeMethodTargetAndHost) {
  ASSERT_EQ(build({{":method", "GET"}, {":scheme", "https"}, {":authority", "Example.COM:8443"},
                   {":path", "/a/../b%20c?x=1"}, {"accept", "*/*"}}),
            0);
  const RequestHead& r = ex_.req;
  EXPECT_EQ(r.version, 30);
  EXPECT_EQ(r.method, Method::get);
  EXPECT_EQ(r.target, "/a/../b%20c?x=1");
  EXPECT_EQ(r.path, "/b c");
  EXPECT_EQ(r.query, "x=1");
  EXPECT_EQ(r.host, "example.com");
  ASSERT_NE(r.find(HeaderToken::host), nullptr);  // handlers and upstreams see a Host field
  EXPECT_EQ(r.find(HeaderToken::host)->value, "Example.COM:8443");
  EXPECT_FALSE(r.chunked);
}

TEST_F(FieldSectionTest, CookieCrumbsAreJoined) {
  ASSERT_EQ(build({{":method", "GET"}, {":path", "/"}, {"cookie", "a=1"}, {"cookie", "b=2"}}), 0);
  const Header* c = ex_.req.find(HeaderToken::cookie);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->value, "a=1; b=2");
}

TEST_F(FieldSectionTest, AsteriskTargetForOptions) {
  ASSERT_EQ(build({{":method", "OPTIONS"}, {":path", "*"}, {":authority", "a"}}), 0);
  EXPECT_EQ(ex_.req.path, "*");
}

TEST_F(FieldSectionTest, BodyWithoutLengthIsStreamed) {
  ASSERT_EQ(build({{":method", "POST"}, {":path", "/"}}, 20, true), 0);
  EXPECT_TRUE(ex_.req.chunked);
  EXPECT_EQ(ex_.req.content_length, -1);
}

TEST_F(FieldSectionTest, ContentLengthIsRead) {
  ASSERT_EQ(build({{":method", "POST"}, {":path", "/"}, {"content-length", "12"}}, 20, true), 0);
  EXPECT_FALSE(ex_.req.chunked);
  EXPECT_EQ(ex_.req.content_length, 12);
}

TEST_F(FieldSectionTest, TooLargeSectionIs431) {
  EXPECT_EQ(build({{":method", "GET"}, {":path", "/"}, {"x-big", std::string(kFieldLimit, 'a')}}), 431);
  EXPECT_EQ(reason_, "client sent too large request headers");
}

TEST_F(FieldSectionTest, ManyFieldsPastTheListLimitAre431) {
  std::vector<std::pair<std::string, std::string>> f{{":method", "GET"}, {":path", "/"}};
  for (int i = 0; i < 200; ++i) f.emplace_back("x-field-" + std::to_string(i), std::string(60, 'v'));
  EXPECT_EQ(build(f), 431);
}

TEST_F(FieldSectionTest, BadPathAndAuthorityAre400) {
  EXPECT_EQ(build({{":method", "GET"}, {":path", "nope"}}), 400);
  EXPECT_EQ(reason_, "client sent invalid :path");
}

TEST_F(FieldSectionTest, BadAuthorityIs400) {
  EXPECT_EQ(build({{":method", "GET"}, {":path", "/"}, {":authority", "a b"}}), 400);
  EXPECT_EQ(reason_, "client sent invalid :authority");
}

TEST_F(FieldSectionTest, ConnectIs405) {
  EXPECT_EQ(build({{":method", "CONNECT"}, {":authority", "example.com:443"}}), 405);
}

}  // namespace
}  // namespace torii::http
