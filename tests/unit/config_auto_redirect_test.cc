// nginx's auto_redirect in location selection: a path one slash short of a
// location with its own *_pass selects that location for a 301.
#include <gtest/gtest.h>

#include "config/config.h"
#include "config/loader.h"

namespace torii::config {
namespace {

const char* kConfig = R"(
http { server {
  location / { return 200 root; }
  location /p/ { proxy_pass http://127.0.0.1:1; }
  location /f/ { fastcgi_pass 127.0.0.1:1; }
  location /u/ { uwsgi_pass 127.0.0.1:1; }
  location /g/ { grpc_pass grpc://127.0.0.1:1; }
  location /m/ { set $memcached_key $uri; memcached_pass 127.0.0.1:1; }
  location /sc/ { scgi_pass 127.0.0.1:1; }
  location /e/ { proxy_pass http://127.0.0.1:1; }
  location = /e { return 200 exact; }
  location /s/ { return 200 static; }
  location ~ ^/r$ { return 200 regex; }
  location /r/ { proxy_pass http://127.0.0.1:1; }
  location /n { return 200 n; location /n/ { proxy_pass http://127.0.0.1:1; } }
  location /q { return 200 q; }
  location /q/ { proxy_pass http://127.0.0.1:1; }
  location = /x/ { proxy_pass http://127.0.0.1:1; }
  location /i/ { if ($arg_a) { proxy_pass http://127.0.0.1:1; } }
  location /w/ { proxy_pass http://127.0.0.1:1; location /w/in/ { return 200 in; } }
} }
)";

struct Pick {
  std::string pattern;
  bool redirect = false;
};

Pick pick(const Server& s, std::string_view path) {
  bool redirect = true;  // find_location must say
  const Location* l = find_location(s, path, nullptr, &redirect);
  return {l ? l->pattern : "(none)", redirect};
}

TEST(ConfigAutoRedirect, PathOneSlashShortOfAPassLocation) {
  auto cfg = load_from_string(kConfig, "/srv/torii/");
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  const Server& s = *(*cfg)->servers[0];
  struct Case {
    const char* path;
    const char* pattern;
    bool redirect;
  } cases[] = {
      {"/p", "/p/", true},
      {"/p/", "/p/", false},
      {"/p/x", "/p/", false},
      {"/px", "/", false},
      {"/f", "/f/", true},
      {"/u", "/u/", true},
      {"/g", "/g/", true},
      {"/m", "/m/", true},
      {"/sc", "/sc/", true},
      {"/e", "/e", false},    // an exact location of the path itself
      {"/s", "/", false},     // no *_pass: no redirect
      {"/r", "/r/", true},    // regexes are not looked at
      {"/n", "/n/", true},    // a nested location below the prefix of the path
      {"/q", "/q", false},    // a prefix location of exactly the path
      {"/x", "/x/", true},    // an exact location with proxy_pass too
      {"/i", "/", false},     // proxy_pass inside `if` only
      {"/w/in", "/w/", false},  // the nested location has no pass of its own
  };
  for (const auto& c : cases) {
    const Pick p = pick(s, c.path);
    EXPECT_EQ(p.pattern, c.pattern) << c.path;
    EXPECT_EQ(p.redirect, c.redirect) << c.path;
  }
}

TEST(ConfigAutoRedirect, ExactAndPrefixOfOneNameShareTheRedirect) {
  // nginx keeps both in one tree node: either one's *_pass makes it
  // redirect, and the exact one's settings answer.
  auto cfg = load_from_string(R"(
http { server {
  location /a/ { proxy_pass http://127.0.0.1:1; }
  location = /a/ { return 200 exact; }
} })", "/srv/torii/");
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  const Server& s = *(*cfg)->servers[0];
  bool redirect = false;
  const Location* l = find_location(s, "/a", nullptr, &redirect);
  ASSERT_NE(l, nullptr);
  EXPECT_TRUE(redirect);
  EXPECT_EQ(l->match, Location::Match::exact);
}

}  // namespace
}  // namespace torii::config
