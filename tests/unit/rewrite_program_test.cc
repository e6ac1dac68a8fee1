// The rewrite module: configs compiled into programs and run through the
// request pipeline with no network. Each test sends requests through
// run_request and looks at the response a client would get.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/loader.h"
#include "http/exchange.h"
#include "http/pipeline.h"
#include "modules/rewrite/program.h"

namespace torii::rewrite {
namespace {

class RecordingSink : public http::ResponseSink {
 public:
  void send_head(const http::ResponseHead& head) override { this->head = head; }
  void send_body(std::string_view data) override { body.append(data); }
  void send_file(std::shared_ptr<const http::OpenFile> f, int64_t offset, int64_t length) override {
    std::string buf(static_cast<size_t>(length), '\0');
    ssize_t n = ::pread(f->fd, buf.data(), buf.size(), offset);
    body.append(buf.data(), n > 0 ? static_cast<size_t>(n) : 0);
  }
  void finish() override { finished = true; }

  http::ResponseHead head;
  std::string body;
  bool finished = false;
};

struct Response {
  int status = 0;
  std::string location;
  std::string body;
  std::string header(const http::ResponseHead& h, std::string_view name) {
    const std::string* v = h.find(name);
    return v ? *v : std::string();
  }
  http::ResponseHead head;
  bool closed = false;
};

class RewriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("torii-rewrite-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "www/dir");
    std::ofstream(dir_ / "www/file.txt") << "file\n";
    std::ofstream(dir_ / "www/maintenance.html") << "down\n";
    std::ofstream(dir_ / "www/tool.sh") << "#!/bin/sh\n";
    ::chmod((dir_ / "www/tool.sh").c_str(), 0755);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `body` goes inside a server block whose root is the test's www folder.
  void load(const std::string& body) {
    std::string text = "http { server { listen 127.0.0.1:8080; server_name example.com; root " +
                       (dir_ / "www").string() + ";\n" + body + "\n} }";
    auto r = config::load_from_string(text, dir_.string() + "/");
    ASSERT_TRUE(r.ok()) << r.error();
    cfg_ = *r;
  }

  std::string load_error(const std::string& body) {
    std::string text = "http { server {\n" + body + "\n} }";
    auto r = config::load_from_string(text, dir_.string() + "/");
    return r.ok() ? std::string("(loaded)") : r.error();
  }

  // target: "/path?args"; headers: name/value pairs.
  Response get(const std::string& target, std::vector<std::pair<std::string, std::string>> headers = {},
               bool tls = false) {
    RecordingSink sink;
    http::ConnectionInfo conn;
    conn.remote_addr = "127.0.0.1";
    conn.server_addr = "127.0.0.1";
    conn.server_port = tls ? 443 : 8080;
    conn.tls = tls;
    http::WorkerServices services;
    http::Exchange ex(sink, conn, services);
    ex.config = cfg_;
    ex.server = cfg_->servers.front().get();
    target_ = target;
    http::RequestHead& r = ex.req;
    r.method = http::Method::get;
    r.method_name = "GET";
    r.target = target_;
    size_t q = target_.find('?');
    r.raw_path = std::string_view(target_).substr(0, q);
    if (q != std::string::npos) {
      r.query = std::string_view(target_).substr(q + 1);
      r.has_query = true;
    }
    r.path = decode(r.raw_path);
    r.host = "example.com";
    header_store_ = std::move(headers);
    for (const auto& [n, v] : header_store_) r.headers.push_back({n, v});
    http::run_request(ex);
    Response out;
    out.status = sink.head.status;
    out.head = sink.head;
    out.location = out.header(sink.head, "Location");
    out.body = sink.body;
    out.closed = ex.close_connection && !ex.head_sent();
    return out;
  }

  static std::string decode(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '%' && i + 2 < s.size()) {
        out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
        i += 2;
      } else {
        out.push_back(s[i]);
      }
    }
    return out;
  }

  std::filesystem::path dir_;
  std::shared_ptr<const config::Config> cfg_;
  std::string target_;
  std::vector<std::pair<std::string, std::string>> header_store_;
};

TEST_F(RewriteTest, LocationWithoutDirectivesHasNoProgram) {
  load("location /a { }\nlocation /b { return 204; }");
  const auto& locs = cfg_->servers.front()->locations;
  EXPECT_FALSE(locs[0]->settings.rewrite);
  ASSERT_TRUE(locs[1]->settings.rewrite);
  EXPECT_EQ(locs[1]->settings.rewrite->steps.size(), 1u);
  EXPECT_FALSE(cfg_->servers.front()->rewrite);
}

TEST_F(RewriteTest, FlagLastSearchesTheLocationAgain) {
  load("location /old/ { rewrite ^/old/(.*)$ /new/$1 last; return 500; }\n"
       "location /new/ { return 200 \"new $uri $args\"; }");
  auto r = get("/old/x?a=1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "new /new/x a=1");
}

TEST_F(RewriteTest, NoFlagGoesOnWithTheNextDirectiveThenSearchesAgain) {
  load("location /a { rewrite ^/a(.*)$ /b$1; rewrite ^/b(.*)$ /c$1; }\n"
       "location /c { return 200 \"c $uri\"; }");
  auto r = get("/a1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "c /c1");
}

TEST_F(RewriteTest, FlagBreakStaysInTheLocation) {
  load("location /m/ { rewrite ^ /maintenance.html break; return 500; }");
  auto r = get("/m/anything");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "down\n");
}

TEST_F(RewriteTest, RedirectAndPermanentFlags) {
  load("location /r { rewrite ^/r(.*)$ /to$1 redirect; }\n"
       "location /p { rewrite ^/p(.*)$ /to$1 permanent; }");
  auto r = get("/r1?x=2");
  EXPECT_EQ(r.status, 302);
  EXPECT_EQ(r.location, "http://example.com:8080/to1?x=2");
  r = get("/p1");
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.location, "http://example.com:8080/to1");
}

TEST_F(RewriteTest, AbsoluteReplacementIsARedirect) {
  load("location / { rewrite ^/(.*)$ https://other.example/$1?from=old; }\n"
       "location /s { rewrite ^ $scheme://$host/x permanent; }");
  auto r = get("/path?q=1");
  EXPECT_EQ(r.status, 302);
  EXPECT_EQ(r.location, "https://other.example/path?from=old&q=1");  // '&': the replacement has a '?'
  r = get("/s", {}, true);
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.location, "https://example.com/x");
}

TEST_F(RewriteTest, TrailingQuestionMarkDropsArguments) {
  load("location /a { rewrite ^ /b? last; }\nlocation /r { rewrite ^ /b? permanent; }\n"
       "location /n { rewrite ^ /b?k=v last; }\n"
       "location /b { return 200 \"[$args]\"; }");
  EXPECT_EQ(get("/a?x=1").body, "[]");
  EXPECT_EQ(get("/r?x=1").location, "http://example.com:8080/b");
  EXPECT_EQ(get("/n?x=1").body, "[k=v&x=1]");
}

TEST_F(RewriteTest, NamedCapturesAndCapturesInArguments) {
  load("location /u/ { rewrite ^/u/(?<user>[^/]+)/(.*)$ /show?u=$user&rest=$2 last; }\n"
       "location = /show { return 200 \"$arg_u $arg_rest $user\"; }");
  EXPECT_EQ(get("/u/ann/a/b").body, "ann a/b ann");
  // A percent-encoded request URI: captures are escaped in the arguments.
  EXPECT_EQ(get("/u/ann/a%26b").body, "ann a%26b ann");
}

TEST_F(RewriteTest, RewriteCycleIsA500After10Changes) {
  load("location /loop { rewrite ^/loop(.*)$ /loop$1x last; }");
  auto r = get("/loop");
  EXPECT_EQ(r.status, 500);
}

TEST_F(RewriteTest, TenChangesAreAllowed) {
  // /c0 -> /c1 ... -> /c10: ten URI changes, the last location answers.
  std::string conf;
  for (int i = 0; i < 10; ++i)
    conf += "location = /c" + std::to_string(i) + " { rewrite ^ /c" + std::to_string(i + 1) + " last; }\n";
  conf += "location = /c10 { return 200 done; }\nlocation = /d0 { rewrite ^ /c0 last; }";
  load(conf);
  EXPECT_EQ(get("/c0").status, 200);
  EXPECT_EQ(get("/d0").status, 500);  // eleven
}

TEST_F(RewriteTest, ZeroLengthUriIs500) {
  load("location / { rewrite ^ $arg_none; }");
  EXPECT_EQ(get("/x").status, 500);
}

TEST_F(RewriteTest, SetVariablesReachEveryTemplate) {
  load("set $site torii;\n"
       "location / { set $x \"v-$uri\"; add_header X-Var $x; add_header X-Site $site; return 200 \"$x\"; }");
  auto r = get("/p");
  // The server-level set ran before the location was chosen.
  EXPECT_EQ(r.body, "v-/p");
  EXPECT_EQ(r.header(r.head, "X-Var"), "v-/p");
  EXPECT_EQ(r.header(r.head, "X-Site"), "torii");
}

TEST_F(RewriteTest, UseBeforeSetInFileOrder) {
  // return names $later before the set that defines it, as nginx allows.
  load("location /a { return 200 \"[$later]\"; }\nlocation /b { set $later yes; return 200 \"[$later]\"; }");
  EXPECT_EQ(get("/a").body, "[]");
  EXPECT_EQ(get("/b").body, "[yes]");
}

TEST_F(RewriteTest, SetArgsChangesTheArguments) {
  load("location / { set $args \"a=1\"; return 200 \"$args $arg_a\"; }");
  EXPECT_EQ(get("/?z=9").body, "a=1 1");
}

TEST_F(RewriteTest, IfVariableTruth) {
  load("location / { set $v $arg_v; if ($v) { return 200 yes; } return 200 no; }");
  EXPECT_EQ(get("/?v=1").body, "yes");
  EXPECT_EQ(get("/?v=0").body, "no");
  EXPECT_EQ(get("/?v=").body, "no");
  EXPECT_EQ(get("/").body, "no");
}

TEST_F(RewriteTest, IfEqualAndNotEqual) {
  load("location /e { if ($arg_a = \"x y\") { return 200 eq; } return 200 ne; }\n"
       "location /n { if ($arg_a != $arg_b) { return 200 differ; } return 200 same; }");
  EXPECT_EQ(get("/e?a=x%20y").body, "ne");  // $arg_ is raw: "x%20y"
  EXPECT_EQ(get("/e").body, "ne");
  EXPECT_EQ(get("/n?a=1&b=2").body, "differ");
  EXPECT_EQ(get("/n?a=1&b=1").body, "same");
  load("location / { if ($request_method = GET) { return 200 get; } }");
  EXPECT_EQ(get("/").body, "get");
}

TEST_F(RewriteTest, IfRegexOperators) {
  load("location / {\n"
       "  if ($http_user_agent ~* (bot|crawl)) { return 403; }\n"
       "  if ($http_user_agent ~ ^curl/(\\d+)) { return 200 \"curl $1\"; }\n"
       "  if ($http_user_agent !~ Mozilla) { return 200 other; }\n"
       "  if ($http_user_agent !~* firefox) { return 200 notfirefox; }\n"
       "  return 200 firefox;\n"
       "}");
  EXPECT_EQ(get("/", {{"User-Agent", "GoogleBot"}}).status, 403);
  EXPECT_EQ(get("/", {{"User-Agent", "curl/8"}}).body, "curl 8");
  EXPECT_EQ(get("/", {{"User-Agent", "wget"}}).body, "other");
  EXPECT_EQ(get("/", {{"User-Agent", "Mozilla Chrome"}}).body, "notfirefox");
  EXPECT_EQ(get("/", {{"User-Agent", "Mozilla FireFox"}}).body, "firefox");
}

TEST_F(RewriteTest, IfFileTests) {
  load("location / {\n"
       "  if (-f $request_filename) { return 200 file; }\n"
       "  if (-d $request_filename) { return 200 dir; }\n"
       "  if (!-e $request_filename) { return 200 missing; }\n"
       "}\n"
       "location /x/ {\n"
       "  if (-x $document_root$arg_p) { return 200 exec; }\n"
       "  if (!-x $document_root$arg_p) { return 200 noexec; }\n"
       "}\n"
       "location /n/ {\n"
       "  if (!-f $document_root$arg_p) { return 200 notfile; }\n"
       "  if (!-d $document_root$arg_p) { return 200 notdir; }\n"
       "  if (-e $document_root$arg_p) { return 200 exists; }\n"
       "}");
  EXPECT_EQ(get("/file.txt").body, "file");
  EXPECT_EQ(get("/dir").body, "dir");
  EXPECT_EQ(get("/nothing").body, "missing");
  EXPECT_EQ(get("/x/?p=/tool.sh").body, "exec");
  EXPECT_EQ(get("/x/?p=/file.txt").body, "noexec");
  EXPECT_EQ(get("/x/?p=/none").body, "noexec");
  EXPECT_EQ(get("/n/?p=/dir").body, "notfile");
  EXPECT_EQ(get("/n/?p=/file.txt").body, "notdir");
}

TEST_F(RewriteTest, IfSwitchesTheSettingsAsNginxDoes) {
  // add_header inside `if` replaces the location's; the last true `if` wins.
  load("location / {\n"
       "  add_header X-Outer 1;\n"
       "  if ($arg_a) { add_header X-First 1; }\n"
       "  if ($arg_b) { add_header X-Second 1; }\n"
       "  return 200 ok;\n"
       "}");
  auto r = get("/?a=1&b=1");
  EXPECT_EQ(r.header(r.head, "X-Outer"), "");
  EXPECT_EQ(r.header(r.head, "X-First"), "");
  EXPECT_EQ(r.header(r.head, "X-Second"), "1");
  r = get("/?a=1");
  EXPECT_EQ(r.header(r.head, "X-First"), "1");
  r = get("/");
  EXPECT_EQ(r.header(r.head, "X-Outer"), "1");
}

TEST_F(RewriteTest, BreakStopsTheProgram) {
  load("location / { set $a 1; break; set $a 2; return 200 $a; }\n"
       "location /b { if ($arg_x) { break; } return 200 after; }");
  // break ends the rewrite directives: no return runs, the static handler answers.
  EXPECT_EQ(get("/file.txt").body, "file\n");
  EXPECT_EQ(get("/b").body, "after");
  EXPECT_EQ(get("/b?x=1").status, 404);
}

TEST_F(RewriteTest, ReturnRunsInItsPlaceAmongTheDirectives) {
  load("location /first { return 200 first; rewrite ^ /other last; }\n"
       "location /second { rewrite ^ /other last; return 200 second; }\n"
       "location /other { return 200 other; }");
  EXPECT_EQ(get("/first").body, "first");
  EXPECT_EQ(get("/second").body, "other");
}

TEST_F(RewriteTest, ReturnComesBeforeAccessRules) {
  // nginx's rewrite phase runs before its access phase.
  load("location / { deny all; return 200 ok; }");
  EXPECT_EQ(get("/").status, 200);
}

TEST_F(RewriteTest, ServerLevelRunsBeforeLocationSelection) {
  load("if ($scheme = http) { return 301 https://$host$request_uri; }\n"
       "rewrite ^/legacy/(.*)$ /new/$1;\n"
       "location /new/ { return 200 \"new $1\"; }\n"
       "location /legacy/ { return 200 legacy; }");
  auto r = get("/legacy/x?y=1");
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.location, "https://example.com/legacy/x?y=1");
  r = get("/legacy/x", {}, true);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "new x");
}

TEST_F(RewriteTest, ServerRewritesRunAgainAfterAnInternalRedirect) {
  load("rewrite ^/missing$ /found;\n"
       "error_page 404 /missing;\n"
       "location = /found { return 200 found; }\n"
       "location / { }");
  EXPECT_EQ(get("/nope").body, "found");
}

TEST_F(RewriteTest, Return444ClosesAndReturnInIfUsesIfSettings) {
  load("location / { if ($arg_close) { return 444; } if ($arg_h) { add_header X-H 1; return 200 h; } }");
  EXPECT_TRUE(get("/?close=1").closed);
  auto r = get("/?h=1");
  EXPECT_EQ(r.header(r.head, "X-H"), "1");
}

TEST_F(RewriteTest, LocationRegexCapturesAndNamedCaptures) {
  load("location ~ ^/img/(?<name>[a-z]+)\\.(png|gif)$ { return 200 \"$name $2 $1\"; }\n"
       "location ~ ^/r/(.*)$ { rewrite ^ /to/$1 last; }\n"
       "location /to/ { return 200 \"to $uri\"; }");
  EXPECT_EQ(get("/img/cat.png").body, "cat png cat");
  // As in nginx, the rewrite's own match (a pattern without groups) empties $1.
  EXPECT_EQ(get("/r/abc").body, "to /to/");
}

TEST_F(RewriteTest, FailedMatchEmptiesCaptures) {
  load("location ~ ^/c/(.*)$ { if ($arg_x ~ ^(z)$) { } return 200 \"[$1]\"; }");
  EXPECT_EQ(get("/c/abc").body, "[]");
  EXPECT_EQ(get("/c/abc?x=z").body, "[z]");
}

TEST_F(RewriteTest, ConfigErrors) {
  EXPECT_NE(load_error("set $uri x;").find("the duplicate \"uri\" variable"), std::string::npos);
  EXPECT_NE(load_error("set x y;").find("invalid variable name \"x\""), std::string::npos);
  EXPECT_NE(load_error("rewrite ^ /x bogus;").find("invalid parameter \"bogus\""), std::string::npos);
  EXPECT_NE(load_error("rewrite \"(\" /x;").find("pcre2_compile() failed"), std::string::npos);
  EXPECT_NE(load_error("if ($a) { }").find("unknown \"a\" variable"), std::string::npos);
  EXPECT_NE(load_error("if $uri { }").find("invalid condition \"$uri\""), std::string::npos);
  EXPECT_NE(load_error("if ($uri < 1) { }").find("unexpected \"<\" in condition"), std::string::npos);
  EXPECT_NE(load_error("if (-q $uri) { }").find("invalid condition \"-q\""), std::string::npos);
  EXPECT_NE(load_error("location / { if ($uri) { try_files $uri =404; } }")
                .find("\"try_files\" directive is not allowed inside \"if\""),
            std::string::npos);
  EXPECT_NE(load_error("location / { if ($uri) { if ($uri) { } } }").find("\"if\" directive is not allowed inside"),
            std::string::npos);
  EXPECT_NE(load_error("if ($uri) { add_header X 1; }").find("not allowed inside \"if\" at server level"),
            std::string::npos);
  EXPECT_NE(load_error("location / { if ($uri) { proxy_pass http://127.0.0.1:9/x; } }")
                .find("cannot have URI part"),
            std::string::npos);
  EXPECT_EQ(load_error("location / { if ($uri) { proxy_pass http://127.0.0.1:9; root /tmp; expires 1h; "
                       "access_log off; error_page 404 /x; sendfile on; rewrite_log on; set $q 1; break; } }"),
            "(loaded)");
}

}  // namespace
}  // namespace torii::rewrite
