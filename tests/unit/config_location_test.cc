#include <gtest/gtest.h>

#include "config/config.h"
#include "config/loader.h"
#include "rewrite_test_util.h"

namespace torii::config {
namespace {

std::shared_ptr<const Config> load_ok(const std::string& text) {
  auto r = load_from_string(text, "/srv/torii/");
  EXPECT_TRUE(r.ok()) << r.error();
  return r.ok() ? *r : nullptr;
}

// Each location says who it is with "return 200 NAME".
std::string which(const Server& s, std::string_view path, Captures* caps = nullptr) {
  const Location* l = find_location(s, path, caps);
  if (!l) return "(none)";
  if (!first_return(l->settings.rewrite)) return "(no return)";
  return first_return(l->settings.rewrite)->text.source;
}

// The example from nginx's documentation of "location".
const char* kDocExample = R"(
http { server {
  location = / { return 200 A; }
  location / { return 200 B; }
  location /documents/ { return 200 C; }
  location ^~ /images/ { return 200 D; }
  location ~* \.(gif|jpg|jpeg)$ { return 200 E; }
} }
)";

TEST(ConfigLocation, NginxDocumentedExample) {
  auto cfg = load_ok(kDocExample);
  ASSERT_TRUE(cfg);
  const Server& s = *cfg->servers[0];
  struct Case {
    const char* path;
    const char* want;
  } cases[] = {
      {"/", "A"},
      {"/index.html", "B"},
      {"/documents/document.html", "C"},
      {"/images/1.gif", "D"},
      {"/documents/1.jpg", "E"},
      {"/x/1.JPEG", "E"},  // ~* is case-insensitive
      {"/documents", "B"},
      {"/images", "B"},
  };
  for (const auto& c : cases) EXPECT_EQ(which(s, c.path), c.want) << c.path;
}

const char* kNested = R"(
http { server {
  location /a/ {
    return 200 a;
    location /a/b/ { return 200 ab; }
    location ~ \.php$ { return 200 aphp; }
  }
  location ~ \.php$ { return 200 php; }
  location ~ \.PHP$ { return 200 PHP-upper; }
  location ^~ /static/ {
    return 200 static;
    location ~ \.css$ { return 200 staticcss; }
  }
  location ~ ^/re/(\w+)/(\d+)$ {
    return 200 re;
    location ~ /1$ { return 200 re1; }
  }
  location = /exact { return 200 exact; }
  location /exactly { return 200 exactly; }
  location @fallback { return 200 named; }
} }
)";

TEST(ConfigLocation, NestedAndOrder) {
  auto cfg = load_ok(kNested);
  ASSERT_TRUE(cfg);
  const Server& s = *cfg->servers[0];
  struct Case {
    const char* path;
    const char* want;
  } cases[] = {
      {"/a/x", "a"},
      {"/a/b/c", "ab"},
      {"/a/x.php", "aphp"},     // nested regex before the outer one
      {"/a/b/c.php", "aphp"},   // nested prefix, then the parent's regexes
      {"/x.php", "php"},
      {"/x.PHP", "PHP-upper"},  // ~ is case-sensitive
      {"/static/x.php", "static"},     // ^~ stops the outer regexes
      {"/static/x.css", "staticcss"},  // ... but not its own nested ones
      {"/re/abc/12", "re"},
      {"/re/abc/1", "re1"},            // nested regex inside a regex location
      {"/exact", "exact"},
      {"/exact/", "(none)"},
      {"/exactly", "exactly"},
      {"/nothing", "(none)"},
      {"@fallback", "(none)"},         // named locations never match a path
  };
  for (const auto& c : cases) EXPECT_EQ(which(s, c.path), c.want) << c.path;

  const Location* named = find_named_location(s, "@fallback");
  ASSERT_NE(named, nullptr);
  EXPECT_EQ(first_return(named->settings.rewrite)->text.source, "named");
  EXPECT_EQ(find_named_location(s, "@other"), nullptr);
}

TEST(ConfigLocation, RegexCaptures) {
  auto cfg = load_ok(kNested);
  ASSERT_TRUE(cfg);
  Captures caps;
  EXPECT_EQ(which(*cfg->servers[0], "/re/abc/12", &caps), "re");
  EXPECT_EQ(caps.get(0), "/re/abc/12");
  EXPECT_EQ(caps.get(1), "abc");
  EXPECT_EQ(caps.get(2), "12");
  EXPECT_EQ(caps.get(3), "");
  EXPECT_EQ(caps.get(100), "");
}

TEST(ConfigLocation, UnsetGroupIsEmpty) {
  auto cfg = load_ok(R"(http { server { location ~ ^/(a)?(b)$ { return 200 x; } } })");
  ASSERT_TRUE(cfg);
  Captures caps;
  ASSERT_NE(find_location(*cfg->servers[0], "/b", &caps), nullptr);
  EXPECT_EQ(caps.get(1), "");
  EXPECT_EQ(caps.get(2), "b");
}

TEST(ConfigLocation, LongestPrefixWinsRegardlessOfOrder) {
  auto cfg = load_ok(R"(http { server {
    location /a/b/c/ { return 200 abc; }
    location /a/ { return 200 a; }
    location /a/b/ { return 200 ab; }
  } })");
  ASSERT_TRUE(cfg);
  const Server& s = *cfg->servers[0];
  EXPECT_EQ(which(s, "/a/b/c/d"), "abc");
  EXPECT_EQ(which(s, "/a/b/x"), "ab");
  EXPECT_EQ(which(s, "/a/x"), "a");
}

TEST(ConfigLocation, FirstMatchingRegexInFileOrder) {
  auto cfg = load_ok(R"(http { server {
    location ~ /x { return 200 first; }
    location ~ /x/y { return 200 second; }
    location /x/y { return 200 prefix; }
  } })");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(which(*cfg->servers[0], "/x/y/z"), "first");
}

TEST(ConfigLocation, ModifierWrittenTogether) {
  auto cfg = load_ok(R"(http { server {
    location =/e { return 200 e; }
    location ~*\.TXT$ { return 200 txt; }
  } })");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(which(*cfg->servers[0], "/e"), "e");
  EXPECT_EQ(which(*cfg->servers[0], "/a.txt"), "txt");
}

TEST(ConfigLocation, ServerWithoutLocations) {
  auto cfg = load_ok("http { server { root /www; } }");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(find_location(*cfg->servers[0], "/", nullptr), nullptr);
  EXPECT_EQ(cfg->servers[0]->settings.root, "/www");
}

TEST(ConfigLocation, NestingErrors) {
  auto err = [](const std::string& text) {
    auto r = load_from_string(text, "/p/");
    return r.ok() ? std::string() : r.error();
  };
  EXPECT_EQ(err("http { server {\nlocation /a/ {\nlocation /b/ {} } } }"),
            "string:3: location \"/b/\" is outside location \"/a/\"");
  EXPECT_EQ(err("http { server {\nlocation = /a {\nlocation /a/b {} } } }"),
            "string:3: location \"/a\" cannot have inner locations");
  EXPECT_EQ(err("http { server {\nlocation /a {\nlocation @n {} } } }"),
            "string:3: named location \"@n\" can be on the server level only");
  EXPECT_EQ(err("http { server {\nlocation /a {}\nlocation ^~ /a {} } }"),
            "string:3: duplicate location \"/a\"");
  EXPECT_EQ(err("http { server {\nlocation ~ ( {} } }").substr(0, 28), "string:2: pcre2_compile() fa");
  EXPECT_EQ(err("http { server {\nlocation !! /a {} } }"), "string:2: invalid location modifier \"!!\"");
  // Exact and prefix with the same uri are two different locations.
  EXPECT_EQ(err("http { server { location = /a {} location /a {} } }"), "");
}

}  // namespace
}  // namespace torii::config
