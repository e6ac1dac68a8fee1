#include "handlers/static_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "handlers/open_file_cache.h"
#include "http/date.h"
#include "http/etag.h"
#include "http/exchange.h"
#include "log/error_log.h"

namespace torii::handlers {
namespace {

using http::Method;
using Kind = HandlerResult::Kind;

config::Template tpl(const char* s) {
  auto t = config::compile_template(s);
  EXPECT_TRUE(t.ok());
  return *t;
}

constexpr time_t kMtime = 1700000000;  // Tue, 14 Nov 2023 22:13:20 GMT

// Records what the handler sends, reading file ranges back as bytes.
class RecordingSink : public http::ResponseSink {
 public:
  void send_head(const http::ResponseHead& h) override {
    head = h;
    ++heads;
  }
  void send_body(std::string_view d) override { body.append(d); }
  void send_file(std::shared_ptr<const http::OpenFile> f, int64_t off, int64_t len) override {
    std::string s(static_cast<size_t>(len), '\0');
    EXPECT_EQ(pread(f->fd, s.data(), s.size(), off), len);
    body += s;
    ++files;
  }
  void finish() override { finished = true; }

  http::ResponseHead head;
  int heads = 0;
  int files = 0;
  std::string body;
  bool finished = false;
};

http::HeaderToken token_for(std::string_view name) {
  static const std::pair<std::string_view, http::HeaderToken> kTokens[] = {
      {"If-Match", http::HeaderToken::if_match},
      {"If-None-Match", http::HeaderToken::if_none_match},
      {"If-Modified-Since", http::HeaderToken::if_modified_since},
      {"If-Unmodified-Since", http::HeaderToken::if_unmodified_since},
      {"If-Range", http::HeaderToken::if_range},
      {"Range", http::HeaderToken::range},
  };
  for (const auto& [n, t] : kTokens)
    if (n == name) return t;
  return http::HeaderToken::none;
}

class StaticFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/torii_static_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    log_path_ = root_ + ".log";
    ASSERT_TRUE(log::open_error_log({log_path_, config::LogLevel::error}));

    auto types = std::make_shared<config::MimeTypes>();
    (*types)["html"] = "text/html";
    (*types)["txt"] = "text/plain";
    (*types)["css"] = "text/css";
    server_.settings.types = types;
    server_.settings.default_type = "application/octet-stream";
    server_.settings.root = root_;
    location_.settings = server_.settings;
    location_.pattern = "/";

    write("hello.txt", "Hello, world!\n");                 // 14 bytes
    write("digits.txt", "0123456789abcdefghijklmnopqrstuvwxyz");  // 36 bytes
    mkdir("sub");
  }
  void TearDown() override {
    log::open_error_log({"stderr", config::LogLevel::error});
    const std::string cmd = "chmod -R u+rwx '" + root_ + "'; rm -rf '" + root_ + "' '" + log_path_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }

  void write(const std::string& name, const std::string& body, time_t mtime = kMtime) {
    const std::string p = root_ + "/" + name;
    std::ofstream(p, std::ios::binary) << body;
    struct timeval tv[2] = {{mtime, 0}, {mtime, 0}};
    ASSERT_EQ(utimes(p.c_str(), tv), 0);
  }
  void mkdir(const std::string& name) { ASSERT_EQ(::mkdir((root_ + "/" + name).c_str(), 0755), 0); }

  config::LocationSettings& settings() { return location_.settings; }

  // Runs one request through serve_static and keeps the exchange for checks.
  HandlerResult run(Method m, std::string path,
                    std::vector<std::pair<std::string, std::string>> headers = {},
                    std::string query = "") {
    sink_ = RecordingSink();
    ex_ = std::make_unique<http::Exchange>(sink_, conn_, services_);
    ex_->server = &server_;
    ex_->location = &location_;
    ex_->captures = captures_;
    ex_->req.method = m;
    ex_->req.method_name = http::method_name(m);
    ex_->req.path = std::move(path);
    ex_->req.host = "example.com";
    strings_.push_back(std::move(query));
    ex_->req.query = strings_.back();
    ex_->req.has_query = !strings_.back().empty();
    for (auto& [n, v] : headers) {
      strings_.push_back(n);
      const std::string_view name = strings_.back();
      strings_.push_back(v);
      ex_->req.headers.push_back({name, strings_.back(), token_for(name)});
    }
    return serve_static(*ex_);
  }

  std::string sent(std::string_view name) const {
    for (const auto& [n, v] : sink_.head.headers)
      if (n == name) return v;
    return "<none>";
  }
  std::string response_header(std::string_view name) const {
    for (const auto& [n, v] : ex_->response.headers)
      if (n == name) return v;
    return "<none>";
  }
  std::string log_text() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string root_;
  std::string log_path_;
  config::Server server_;
  config::Location location_;
  config::Captures captures_;
  OpenFileCache cache_;
  http::WorkerServices services_{&cache_};
  http::ConnectionInfo conn_ = [] {
    http::ConnectionInfo c;
    c.server_port = 8080;
    return c;
  }();
  RecordingSink sink_;
  std::unique_ptr<http::Exchange> ex_;
  std::deque<std::string> strings_;
};

TEST_F(StaticFileTest, ServesFileWithHeaders) {
  const HandlerResult r = run(Method::get, "/hello.txt");
  EXPECT_EQ(r.kind, Kind::responded);
  EXPECT_EQ(sink_.heads, 1);
  EXPECT_EQ(sink_.head.status, 200);
  EXPECT_EQ(sent("Content-Type"), "text/plain");
  EXPECT_EQ(sent("Last-Modified"), "Tue, 14 Nov 2023 22:13:20 GMT");
  EXPECT_EQ(sent("ETag"), http::make_etag(kMtime, 14));
  EXPECT_EQ(sent("ETag"), "\"6553f100-e\"");
  EXPECT_EQ(sent("Accept-Ranges"), "bytes");
  EXPECT_EQ(sink_.head.content_length, 14);
  EXPECT_EQ(sink_.body, "Hello, world!\n");
  EXPECT_TRUE(sink_.finished);
  EXPECT_EQ(ex_->request_filename, root_ + "/hello.txt");
  EXPECT_FALSE(ex_->header_only);
}

TEST_F(StaticFileTest, UnknownExtensionGetsDefaultType) {
  write("blob.bin", "xyz");
  run(Method::get, "/blob.bin");
  EXPECT_EQ(sent("Content-Type"), "application/octet-stream");
}

TEST_F(StaticFileTest, EtagOffOmitsIt) {
  settings().etag = false;
  run(Method::get, "/hello.txt");
  EXPECT_EQ(sink_.head.status, 200);
  EXPECT_EQ(sent("ETag"), "<none>");
}

TEST_F(StaticFileTest, EmptyFile) {
  write("empty.txt", "");
  run(Method::get, "/empty.txt", {{"Range", "bytes=0-"}});
  EXPECT_EQ(sink_.head.status, 200);
  EXPECT_EQ(sink_.head.content_length, 0);
  EXPECT_EQ(sink_.files, 0);
  EXPECT_TRUE(sink_.finished);
}

TEST_F(StaticFileTest, HeadSendsHeadersOnly) {
  const HandlerResult r = run(Method::head, "/hello.txt");
  EXPECT_EQ(r.kind, Kind::responded);
  EXPECT_TRUE(ex_->header_only);
  EXPECT_EQ(sink_.head.status, 200);
  EXPECT_EQ(sink_.head.content_length, 14);
  EXPECT_EQ(sent("ETag"), "\"6553f100-e\"");
  EXPECT_EQ(sink_.body, "");
  EXPECT_TRUE(sink_.finished);
}

TEST_F(StaticFileTest, MissingFileIs404AndLogged) {
  const HandlerResult r = run(Method::get, "/nope.txt");
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(sink_.heads, 0);
  EXPECT_NE(log_text().find("open() \"" + root_ + "/nope.txt\" failed (2: No such file or directory)"),
            std::string::npos)
      << log_text();
  // A path through a file is missing too.
  EXPECT_EQ(run(Method::get, "/hello.txt/x").status, 404);
}

TEST_F(StaticFileTest, LogNotFoundOff) {
  settings().log_not_found = false;
  EXPECT_EQ(run(Method::get, "/nope.txt").status, 404);
  EXPECT_EQ(log_text(), "");
}

TEST_F(StaticFileTest, UnreadableFileIs403) {
  write("secret.txt", "s");
  ASSERT_EQ(chmod((root_ + "/secret.txt").c_str(), 0), 0);
  const HandlerResult r = run(Method::get, "/secret.txt");
  if (geteuid() == 0) GTEST_SKIP() << "root ignores file modes";
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(log_text().find("(13: Permission denied)"), std::string::npos);
}

TEST_F(StaticFileTest, MethodsOtherThanGetAndHead) {
  EXPECT_EQ(run(Method::put, "/hello.txt").status, 405);
  EXPECT_EQ(run(Method::del, "/nope.txt").status, 405);
  // nginx looks the file up for POST first: missing stays 404.
  EXPECT_EQ(run(Method::post, "/hello.txt").status, 405);
  EXPECT_EQ(run(Method::post, "/nope.txt").status, 404);
  EXPECT_EQ(sink_.heads, 0);
}

TEST_F(StaticFileTest, NulInPathIsRefused) {
  const HandlerResult r = run(Method::get, std::string("/hello.txt\0.png", 15));
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 400);
}

TEST_F(StaticFileTest, DirectoryWithoutSlashRedirects) {
  HandlerResult r = run(Method::get, "/sub");
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(response_header("Location"), "http://example.com:8080/sub/");
  EXPECT_EQ(sink_.heads, 0);

  r = run(Method::get, "/sub", {}, "a=1&b=2");
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(response_header("Location"), "http://example.com:8080/sub/?a=1&b=2");

  // Decoded characters can't break the header line.
  mkdir("a b\r\nX: y%");
  r = run(Method::get, "/a b\r\nX: y%");
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(response_header("Location"), "http://example.com:8080/a%20b%0D%0AX:%20y%25/");
}

TEST_F(StaticFileTest, IndexFileIsAnInternalRedirect) {
  write("sub/index.html", "<p>index</p>");
  HandlerResult r = run(Method::get, "/sub/");
  EXPECT_EQ(r.kind, Kind::internal_redirect);
  EXPECT_EQ(r.uri, "/sub/index.html");
  r = run(Method::get, "/sub/", {}, "q=1");
  EXPECT_EQ(r.uri, "/sub/index.html?q=1");

  settings().index = {tpl("index.htm"), tpl("default.txt"), tpl("index.html")};
  write("sub/default.txt", "d");
  r = run(Method::get, "/sub/");
  EXPECT_EQ(r.kind, Kind::internal_redirect);
  EXPECT_EQ(r.uri, "/sub/default.txt");
}

TEST_F(StaticFileTest, DirectoryWithoutIndex) {
  HandlerResult r = run(Method::get, "/sub/");
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(log_text().find("directory index of \"" + root_ + "/sub/\" is forbidden"), std::string::npos);
  r = run(Method::get, "/nodir/");
  EXPECT_EQ(r.status, 404);
  r = run(Method::get, "/hello.txt/");
  EXPECT_EQ(r.status, 404);
}

TEST_F(StaticFileTest, AbsoluteIndex) {
  settings().index = {tpl("/missing.html"), tpl("/fallback.html")};
  // Not tested: the last absolute index is taken as is.
  HandlerResult r = run(Method::get, "/sub/");
  EXPECT_EQ(r.kind, Kind::internal_redirect);
  EXPECT_EQ(r.uri, "/fallback.html");
  settings().index = {tpl("/hello.txt"), tpl("/fallback.html")};
  r = run(Method::get, "/sub/");
  EXPECT_EQ(r.uri, "/hello.txt");
}

TEST_F(StaticFileTest, TryFilesServesTheFirstThatExists) {
  settings().try_files = {tpl("$uri"), tpl("$uri/"), tpl("=404")};
  HandlerResult r = run(Method::get, "/hello.txt");
  EXPECT_EQ(r.kind, Kind::responded);
  EXPECT_EQ(sink_.body, "Hello, world!\n");
  EXPECT_EQ(ex_->request_filename, root_ + "/hello.txt");

  // A directory passes only the "$uri/" test, which names it without the
  // slash (nginx): asked for without its slash it is redirected to it,
  // with it it goes to its index.
  write("sub/index.html", "i");
  r = run(Method::get, "/sub");
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(ex_->req.path, "/sub");
  r = run(Method::get, "/sub/");
  EXPECT_EQ(r.kind, Kind::internal_redirect);
  EXPECT_EQ(r.uri, "/sub/index.html");
  EXPECT_EQ(ex_->req.path, "/sub/");

  r = run(Method::get, "/none");
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 404);
  // try_files runs before the method check, as in nginx.
  EXPECT_EQ(run(Method::put, "/none").status, 404);
}

TEST_F(StaticFileTest, TryFilesServesAnotherUri) {
  settings().try_files = {tpl("/maintenance.html"), tpl("/digits.txt"), tpl("=500")};
  HandlerResult r = run(Method::get, "/anything.html");
  EXPECT_EQ(r.kind, Kind::responded);
  EXPECT_EQ(sink_.body, "0123456789abcdefghijklmnopqrstuvwxyz");
  EXPECT_EQ(sent("Content-Type"), "text/plain");  // the served file's type
  EXPECT_EQ(ex_->req.path, "/digits.txt");
}

TEST_F(StaticFileTest, TryFilesFallsBackToUriOrNamedLocation) {
  settings().try_files = {tpl("$uri"), tpl("/index.php")};
  HandlerResult r = run(Method::get, "/x", {}, "a=b");
  EXPECT_EQ(r.kind, Kind::internal_redirect);
  EXPECT_EQ(r.uri, "/index.php");  // its own arguments: none (the pipeline clears the request's)
  settings().try_files = {tpl("$uri"), tpl("/index.php?q=$uri")};
  r = run(Method::get, "/x", {}, "a=b");
  EXPECT_EQ(r.uri, "/index.php?q=/x");
  settings().try_files = {tpl("$uri"), tpl("@backend")};
  r = run(Method::get, "/x");
  EXPECT_EQ(r.kind, Kind::internal_redirect);
  EXPECT_EQ(r.uri, "@backend");
}

TEST_F(StaticFileTest, AliasReplacesTheLocationPrefix) {
  mkdir("assets");
  write("assets/app.css", "body{}");
  write("secret.txt", "secret");
  location_.pattern = "/static/";
  settings().alias = root_ + "/assets/";
  settings().alias_prefix = location_.pattern;
  HandlerResult r = run(Method::get, "/static/app.css");
  EXPECT_EQ(r.kind, Kind::responded);
  EXPECT_EQ(sink_.body, "body{}");
  EXPECT_EQ(sent("Content-Type"), "text/css");
  EXPECT_EQ(ex_->request_filename, root_ + "/assets/app.css");

  // The classic missing-slash alias can't climb out of the alias.
  location_.pattern = "/static";
  settings().alias_prefix = location_.pattern;
  r = run(Method::get, "/static../secret.txt");
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(sink_.heads, 0);
  r = run(Method::get, "/static/app.css");
  EXPECT_EQ(sink_.body, "body{}");
}

TEST_F(StaticFileTest, AliasInRegexLocation) {
  mkdir("assets");
  write("assets/app.css", "body{}");
  location_.match = config::Location::Match::regex;
  location_.pattern = "^/img/(.+)$";
  settings().alias = root_ + "/assets/app.css";
  settings().alias_names_file = true;
  HandlerResult r = run(Method::get, "/img/whatever.png");
  EXPECT_EQ(r.kind, Kind::responded);
  EXPECT_EQ(sink_.body, "body{}");

  settings().alias = root_ + "/assets/$1";
  settings().alias_template = *config::compile_template(settings().alias);
  captures_.subject = "/img/app.css";
  captures_.spans = {{0, 12}, {5, 12}};
  r = run(Method::get, "/img/app.css");
  EXPECT_EQ(r.kind, Kind::responded);
  EXPECT_EQ(ex_->request_filename, root_ + "/assets/app.css");

  captures_.subject = "/img/../secret.txt";  // a capture can't bring in ".."
  captures_.spans = {{0, 18}, {5, 18}};
  r = run(Method::get, "/img/x");
  EXPECT_EQ(r.status, 404);
}

TEST_F(StaticFileTest, NotModified) {
  const std::string etag = "\"6553f100-e\"";
  HandlerResult r = run(Method::get, "/hello.txt", {{"If-None-Match", etag}});
  EXPECT_EQ(r.kind, Kind::responded);
  EXPECT_EQ(sink_.head.status, 304);
  EXPECT_EQ(sink_.head.content_length, -1);
  EXPECT_EQ(sent("ETag"), etag);
  EXPECT_EQ(sent("Last-Modified"), "Tue, 14 Nov 2023 22:13:20 GMT");
  EXPECT_EQ(sent("Content-Type"), "<none>");
  EXPECT_TRUE(ex_->header_only);
  EXPECT_EQ(sink_.body, "");
  EXPECT_TRUE(sink_.finished);

  run(Method::head, "/hello.txt", {{"If-None-Match", "\"x\", W/" + etag}});
  EXPECT_EQ(sink_.head.status, 304);
  run(Method::get, "/hello.txt", {{"If-None-Match", "*"}});
  EXPECT_EQ(sink_.head.status, 304);

  run(Method::get, "/hello.txt", {{"If-Modified-Since", "Tue, 14 Nov 2023 22:13:20 GMT"}});
  EXPECT_EQ(sink_.head.status, 304);
}

TEST_F(StaticFileTest, ModifiedGetsTheFile) {
  run(Method::get, "/hello.txt", {{"If-None-Match", "\"6553f100-f\""}});
  EXPECT_EQ(sink_.head.status, 200);
  EXPECT_EQ(sink_.body, "Hello, world!\n");
  // nginx's "exact": a later date is not a match.
  run(Method::get, "/hello.txt", {{"If-Modified-Since", "Tue, 14 Nov 2023 22:13:21 GMT"}});
  EXPECT_EQ(sink_.head.status, 200);
  run(Method::get, "/hello.txt", {{"If-Modified-Since", "garbage"}});
  EXPECT_EQ(sink_.head.status, 200);
  // If-None-Match wins over If-Modified-Since.
  run(Method::get, "/hello.txt",
      {{"If-None-Match", "\"nope\""}, {"If-Modified-Since", "Tue, 14 Nov 2023 22:13:20 GMT"}});
  EXPECT_EQ(sink_.head.status, 200);
}

TEST_F(StaticFileTest, PreconditionFailed) {
  HandlerResult r = run(Method::get, "/hello.txt", {{"If-Match", "\"other\""}});
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 412);
  EXPECT_EQ(sink_.heads, 0);
  r = run(Method::get, "/hello.txt", {{"If-Match", "W/\"6553f100-e\""}});
  EXPECT_EQ(r.status, 412);
  r = run(Method::get, "/hello.txt", {{"If-Match", "\"6553f100-e\""}});
  EXPECT_EQ(r.kind, Kind::responded);
  EXPECT_EQ(sink_.head.status, 200);

  r = run(Method::get, "/hello.txt", {{"If-Unmodified-Since", "Tue, 14 Nov 2023 22:13:19 GMT"}});
  EXPECT_EQ(r.status, 412);
  r = run(Method::get, "/hello.txt", {{"If-Unmodified-Since", "Tue, 14 Nov 2023 22:13:20 GMT"}});
  EXPECT_EQ(r.kind, Kind::responded);
  // If-Match present: If-Unmodified-Since is not looked at.
  r = run(Method::get, "/hello.txt",
          {{"If-Match", "*"}, {"If-Unmodified-Since", "Tue, 14 Nov 2023 22:13:19 GMT"}});
  EXPECT_EQ(r.kind, Kind::responded);
}

TEST_F(StaticFileTest, SingleRange) {
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-4"}});
  EXPECT_EQ(sink_.head.status, 206);
  EXPECT_EQ(sent("Content-Range"), "bytes 0-4/36");
  EXPECT_EQ(sent("Content-Type"), "text/plain");
  EXPECT_EQ(sink_.head.content_length, 5);
  EXPECT_EQ(sink_.body, "01234");

  run(Method::get, "/digits.txt", {{"Range", "bytes=-3"}});
  EXPECT_EQ(sink_.head.status, 206);
  EXPECT_EQ(sent("Content-Range"), "bytes 33-35/36");
  EXPECT_EQ(sink_.body, "xyz");

  run(Method::get, "/digits.txt", {{"Range", "bytes=30-"}});
  EXPECT_EQ(sent("Content-Range"), "bytes 30-35/36");
  EXPECT_EQ(sink_.body, "uvwxyz");
}

TEST_F(StaticFileTest, MultipleRanges) {
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-1,10-12"}});
  EXPECT_EQ(sink_.head.status, 206);
  const std::string type = sent("Content-Type");
  const std::string prefix = "multipart/byteranges; boundary=";
  ASSERT_EQ(type.compare(0, prefix.size(), prefix), 0) << type;
  const std::string b = type.substr(prefix.size());
  EXPECT_FALSE(b.empty());
  EXPECT_EQ(sent("Content-Range"), "<none>");
  const std::string expect = "\r\n--" + b + "\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/36\r\n\r\n01" +
                             "\r\n--" + b + "\r\nContent-Type: text/plain\r\nContent-Range: bytes 10-12/36\r\n\r\nabc" +
                             "\r\n--" + b + "--\r\n";
  EXPECT_EQ(sink_.body, expect);
  EXPECT_EQ(sink_.head.content_length, static_cast<int64_t>(expect.size()));
  EXPECT_TRUE(sink_.finished);

  // Two requests get different boundaries.
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-1,10-12"}});
  EXPECT_NE(sent("Content-Type"), type);

  // Overlapping ranges collapse into one part.
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-5,3-9"}});
  EXPECT_EQ(sink_.head.status, 206);
  EXPECT_EQ(sent("Content-Range"), "bytes 0-9/36");
  EXPECT_EQ(sink_.body, "0123456789");
}

TEST_F(StaticFileTest, UnsatisfiableRange) {
  HandlerResult r = run(Method::get, "/digits.txt", {{"Range", "bytes=100-200"}});
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 416);
  EXPECT_EQ(response_header("Content-Range"), "bytes */36");
  EXPECT_EQ(sink_.heads, 0);
}

TEST_F(StaticFileTest, RangesThatDontApply) {
  run(Method::get, "/digits.txt", {{"Range", "bytes=x-1"}});
  EXPECT_EQ(sink_.head.status, 200);
  EXPECT_EQ(sink_.head.content_length, 36);
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-,0-,0-"}});
  EXPECT_EQ(sink_.head.status, 200);
  EXPECT_EQ(sink_.body.size(), 36u);
}

TEST_F(StaticFileTest, HeadWithRangeGetsThe206Head) {
  // nginx's range filter does not look at the method: the head of the GET's 206.
  run(Method::head, "/digits.txt", {{"Range", "bytes=0-1"}});
  EXPECT_EQ(sink_.head.status, 206);
  EXPECT_EQ(sink_.head.content_length, 2);
  EXPECT_EQ(sent("Content-Range"), "bytes 0-1/36");
  EXPECT_TRUE(sink_.body.empty());
}

TEST_F(StaticFileTest, IfRange) {
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-1"}, {"If-Range", http::make_etag(kMtime, 36)}});
  EXPECT_EQ(sink_.head.status, 206);
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-1"}, {"If-Range", "\"old\""}});
  EXPECT_EQ(sink_.head.status, 200);
  EXPECT_EQ(sink_.body.size(), 36u);
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-1"}, {"If-Range", "W/" + http::make_etag(kMtime, 36)}});
  EXPECT_EQ(sink_.head.status, 200);
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-1"}, {"If-Range", "Tue, 14 Nov 2023 22:13:20 GMT"}});
  EXPECT_EQ(sink_.head.status, 206);
  run(Method::get, "/digits.txt", {{"Range", "bytes=0-1"}, {"If-Range", "Tue, 14 Nov 2023 22:13:21 GMT"}});
  EXPECT_EQ(sink_.head.status, 200);
}

TEST_F(StaticFileTest, ErrorPageKeepsItsStatus) {
  // An error_page redirect landed here: the file goes out with the error
  // status, and neither ranges nor conditionals apply.
  sink_ = RecordingSink();
  ex_ = std::make_unique<http::Exchange>(sink_, conn_, services_);
  ex_->server = &server_;
  ex_->location = &location_;
  ex_->req.method = Method::get;
  ex_->req.path = "/hello.txt";
  ex_->is_internal = true;
  ex_->in_error_page = true;
  ex_->status_override = 404;
  const http::Header range{"Range", "bytes=0-1", http::HeaderToken::range};
  ex_->req.headers.push_back(range);
  EXPECT_EQ(serve_static(*ex_).kind, Kind::responded);
  EXPECT_EQ(sink_.head.status, 404);
  EXPECT_EQ(sink_.body, "Hello, world!\n");
}

TEST_F(StaticFileTest, UsesTheOpenFileCache) {
  settings().open_file_cache.enabled = true;
  settings().open_file_cache.max = 100;
  run(Method::get, "/hello.txt");
  run(Method::get, "/hello.txt");
  EXPECT_EQ(sink_.body, "Hello, world!\n");
  EXPECT_EQ(cache_.size(), 1u);
  EXPECT_EQ(cache_.stats().hits, 1u);
  settings().open_file_cache.enabled = false;
  run(Method::get, "/digits.txt");
  EXPECT_EQ(cache_.size(), 1u);
}

TEST_F(StaticFileTest, NonRegularFileIs404) {
  ASSERT_EQ(mkfifo((root_ + "/pipe").c_str(), 0600), 0);
  const HandlerResult r = run(Method::get, "/pipe");
  EXPECT_EQ(r.kind, Kind::status);
  EXPECT_EQ(r.status, 404);
}

}  // namespace
}  // namespace torii::handlers
