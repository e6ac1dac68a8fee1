#include <gtest/gtest.h>

#include "config/config.h"
#include "config/loader.h"

namespace torii::config {
namespace {

std::string id(const Server& s) { return s.settings.default_type; }

// Each server names itself through default_type, which nothing else sets.
const char* kServers = R"(
http {
  server { listen 8080; server_name default-first; default_type first; }
  server { listen 8080; server_name example.com www.example.com; default_type exact; }
  server { listen 8080; server_name *.example.com; default_type front; }
  server { listen 8080; server_name *.api.example.com; default_type front-longer; }
  server { listen 8080; server_name mail.*; default_type back; }
  server { listen 8080; server_name mail.example.*; default_type back-longer; }
  server { listen 8080; server_name ~^(\w+)\.regex\.net$ ~^re2; default_type regex1; }
  server { listen 8080; server_name ~^.+\.regex\.net$; default_type regex2; }
  server { listen 8080; server_name .dot.org; default_type dot; }
  server { listen 8080; server_name ""; default_type empty; }
  server { listen 8080; server_name UPPER.Case; default_type upper; }
}
)";

TEST(ConfigServerName, NginxPrecedence) {
  auto r = load_from_string(kServers, "/p/");
  ASSERT_TRUE(r.ok()) << r.error();
  const auto& cfg = **r;
  ASSERT_EQ(cfg.listen_groups.size(), 1u);
  const ListenGroup& g = cfg.listen_groups[0];
  EXPECT_EQ(g.servers.size(), 11u);
  struct Case {
    const char* host;
    const char* want;
  } cases[] = {
      {"example.com", "exact"},
      {"www.example.com", "exact"},        // exact beats *.example.com
      {"a.example.com", "front"},
      {"x.api.example.com", "front-longer"},  // longest leading wildcard
      {"api.example.com", "front"},
      {"mail.example.com", "front"},       // leading wildcard beats trailing
      {"mail.example.net", "back-longer"},  // longest trailing wildcard
      {"mail.foo", "back"},
      {"abc.regex.net", "regex1"},         // first regex in order
      {"re2", "regex1"},
      {"a.b.regex.net", "regex2"},
      {"dot.org", "dot"},                  // ".dot.org" matches the bare name
      {"w.dot.org", "dot"},
      {"", "empty"},
      {"upper.case", "upper"},             // names are stored lower-case
      {"unknown.host", "first"},           // the default server
      {"example.com.", "first"},
  };
  for (const auto& c : cases) EXPECT_EQ(id(find_server(g, c.host)), c.want) << c.host;
}

TEST(ConfigServerName, DefaultServerFlag) {
  auto r = load_from_string(R"(http {
    server { listen 80; server_name a; default_type a; }
    server { listen 80 default_server; server_name b; default_type b; }
  })", "/p/");
  ASSERT_TRUE(r.ok()) << r.error();
  const ListenGroup& g = (*r)->listen_groups[0];
  EXPECT_EQ(id(*g.default_server), "b");
  EXPECT_EQ(id(find_server(g, "zzz")), "b");
  EXPECT_EQ(id(find_server(g, "a")), "a");
  EXPECT_TRUE(g.listen.default_server);
}

TEST(ConfigServerName, ImplicitEmptyName) {
  auto r = load_from_string("http { server { listen 81; } }", "/p/");
  ASSERT_TRUE(r.ok()) << r.error();
  const Server& s = *(*r)->servers[0];
  ASSERT_EQ(s.names.size(), 1u);
  EXPECT_EQ(s.names[0].kind, ServerName::Kind::exact);
  EXPECT_EQ(s.names[0].name, "");
}

TEST(ConfigServerName, InvalidNames) {
  auto r = load_from_string("http { server {\nserver_name www.*.com; } }", "/p/");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "string:2: invalid server name or wildcard \"www.*.com\"");
  auto re = load_from_string("http { server {\nserver_name ~(; } }", "/p/");
  ASSERT_FALSE(re.ok());
  EXPECT_NE(re.error().find("string:2: pcre2_compile() failed"), std::string::npos) << re.error();
}

TEST(ConfigServerName, ConflictingNameWarns) {
  auto r = load_from_string("http {\nserver { server_name a; }\nserver { server_name a; } }", "/p/");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(load_warnings().size(), 1u);
  EXPECT_EQ(load_warnings()[0], "string:3: conflicting server name \"a\" on 0.0.0.0:80, ignored");
}

}  // namespace
}  // namespace torii::config
