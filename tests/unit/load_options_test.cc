#include "load/options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "load/request_template.h"
#include "load/url.h"

namespace torii::load {
namespace {

Result<Options> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "torii-load");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_options(int(argv.size()), argv.data());
}

TEST(LoadOptions, DefaultsAndEveryForm) {
  auto o = parse({"http://h/"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->connections, 10u);
  EXPECT_EQ(o->streams, 1u);
  EXPECT_EQ(o->threads, 1u);
  EXPECT_EQ(o->duration_ns, 10'000'000'000);
  EXPECT_EQ(o->requests, 0u);

  o = parse({"-c", "50", "-m10", "--threads=2", "-n", "1000", "--rate", "2000.5", "--h2", "-H", "X-A:  b ",
             "--method", "POST", "--json", "out.json", "https://example.com:8443/a?b=1", "https://example.com:8443/c"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->connections, 50u);
  EXPECT_EQ(o->streams, 10u);
  EXPECT_EQ(o->threads, 2u);
  EXPECT_EQ(o->requests, 1000u);
  EXPECT_DOUBLE_EQ(o->rate, 2000.5);
  EXPECT_EQ(o->protocol, Protocol::h2);
  ASSERT_EQ(o->headers.size(), 1u);
  EXPECT_EQ(o->headers[0].first, "X-A");
  EXPECT_EQ(o->headers[0].second, "b");
  EXPECT_EQ(o->method, "POST");
  EXPECT_EQ(o->json_file, "out.json");
  ASSERT_EQ(o->urls.size(), 2u);
  EXPECT_TRUE(o->urls[0].tls);
  EXPECT_EQ(o->urls[0].host, "example.com");
  EXPECT_EQ(o->urls[0].port, 8443);
  EXPECT_EQ(o->urls[0].path, "/a?b=1");
}

TEST(LoadOptions, Durations) {
  EXPECT_EQ(*parse_duration("10"), 10'000'000'000);
  EXPECT_EQ(*parse_duration("3s"), 3'000'000'000);
  EXPECT_EQ(*parse_duration("500ms"), 500'000'000);
  EXPECT_EQ(*parse_duration("1.5m"), 90'000'000'000);
  EXPECT_EQ(*parse_duration("1h"), 3'600'000'000'000);
  for (const char* bad : {"", "0", "-1", "s", "10x", "1e30"}) EXPECT_FALSE(parse_duration(bad)) << bad;
}

TEST(LoadOptions, Http3OverHttpsWithStreams) {
  auto o = parse({"--h3", "-c", "4", "-m", "10", "https://localhost:8443/"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->protocol, Protocol::h3);
  EXPECT_EQ(o->streams, 10u);
  EXPECT_TRUE(o->urls[0].tls);
}

TEST(LoadOptions, HelpSaysCertificatesAreNotVerified) {
  EXPECT_NE(std::string(kUsage).find("--h3"), std::string::npos);
  EXPECT_NE(std::string(kUsage).find("not verified"), std::string::npos);
}

TEST(LoadOptions, UsageErrorsSayWhatIsWrong) {
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  std::vector<Case> cases = {
      {{}, "no URL"},
      {{"-c", "0", "http://h/"}, "-c"},
      {{"-c", "x", "http://h/"}, "-c"},
      {{"-m", "2000", "http://h/"}, "1 to 1024"},
      {{"-d", "1s", "-n", "10", "http://h/"}, "exclude"},
      {{"--rate", "0", "http://h/"}, "--rate"},
      {{"--h1", "--h2", "http://h/"}, "exclude"},
      {{"--h3", "http://h/"}, "https://"},
      {{"--h2", "--h3", "https://h/"}, "exclude"},
      {{"--h3", "-H", "Connection: close", "https://h/"}, "HTTP/3"},
      {{"-H", "novalue", "http://h/"}, "name: value"},
      {{"-H", "Content-Length: 5", "http://h/"}, "--body"},
      {{"--h2", "-H", "Connection: close", "http://h/"}, "HTTP/2"},
      {{"--bogus", "http://h/"}, "unknown option"},
      {{"-c"}, "needs a value"},
      {{"ftp://h/"}, "http://"},
      {{"http://h:99999/"}, "port"},
      {{"http://a/", "http://b/"}, "share"},
      {{"-t", "4", "-c", "2", "http://h/"}, "threads"},
      {{"--connect-per-request", "-m", "2", "http://h/"}, "-m"},
      {{"--method", "GE T", "http://h/"}, "method"},
  };
  for (const auto& c : cases) {
    auto o = parse(c.args);
    ASSERT_FALSE(o) << c.says;
    EXPECT_NE(o.error().find(c.says), std::string::npos) << o.error();
  }
}

TEST(LoadOptions, Urls) {
  auto u = parse_url("http://[::1]:8080");
  ASSERT_TRUE(u) << u.error();
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->authority, "[::1]:8080");
  EXPECT_EQ(u->path, "/");
  u = parse_url("https://h?q=1#frag");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->path, "/?q=1");
  EXPECT_FALSE(parse_url("http://h/a b"));
  EXPECT_FALSE(parse_url("http://user@h/"));
  EXPECT_FALSE(parse_url("http:///"));
}

TEST(LoadRequestTemplate, HttpOneRequestBytesAndHttpTwoFields) {
  auto o = parse({"--method", "POST", "-H", "X-Trace: 1", "--connect-per-request", "http://h:81/p"});
  ASSERT_TRUE(o) << o.error();
  RequestTemplates t = build_templates(*o, "abc");
  ASSERT_EQ(t.h1.size(), 1u);
  EXPECT_EQ(t.h1[0],
            "POST /p HTTP/1.1\r\nHost: h:81\r\nUser-Agent: torii-load\r\nX-Trace: 1\r\n"
            "Content-Length: 3\r\nConnection: close\r\n\r\nabc");
  ASSERT_EQ(t.h2.size(), 1u);
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& nv : t.h2[0])
    fields.emplace_back(std::string((const char*)nv.name, nv.namelen), std::string((const char*)nv.value, nv.valuelen));
  std::vector<std::pair<std::string, std::string>> want = {
      {":method", "POST"}, {":scheme", "http"}, {":authority", "h:81"}, {":path", "/p"},
      {"user-agent", "torii-load"}, {"x-trace", "1"}, {"content-length", "3"}};
  EXPECT_EQ(fields, want);
}

}  // namespace
}  // namespace torii::load
