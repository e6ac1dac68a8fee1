#include "http/variables.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "http/exchange.h"

namespace torii::http {
namespace {

using config::VarId;

class NullSink : public ResponseSink {
 public:
  void send_head(const ResponseHead&) override {}
  void send_body(std::string_view) override {}
  void send_file(std::shared_ptr<const OpenFile>, int64_t, int64_t) override {}
  void finish() override {}
};

config::TemplatePart lit(std::string s) {
  config::TemplatePart p;
  p.literal = std::move(s);
  return p;
}

config::TemplatePart var(VarId id, std::string arg = {}) {
  config::TemplatePart p;
  p.is_variable = true;
  p.variable = config::Variable{id, std::move(arg)};
  return p;
}

class VariablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conn_.id = 42;
    conn_.requests = 3;
    conn_.remote_addr = "192.0.2.7";
    conn_.remote_port = 51234;
    conn_.server_addr = "198.51.100.1";
    conn_.server_port = 8443;
    conn_.tls = true;

    config::ServerName name;
    name.name = "example.com";
    server_.names.push_back(name);
    server_.settings.root = "/srv/www";

    ex_ = std::make_unique<Exchange>(sink_, conn_, services_);
    ex_->server = &server_;
    RequestHead& r = ex_->req;
    r.method = Method::get;
    r.method_name = "GET";
    r.target = "/a%20b/c.html?x=1&Name=Two&flag&y=";
    r.raw_path = "/a%20b/c.html";
    r.query = "x=1&Name=Two&flag&y=";
    r.has_query = true;
    r.path = "/a b/c.html";
    r.host = "example.com";
    r.version = 11;
    r.headers = {
        {"Host", "example.com:8443"},
        {"User-Agent", "curl/8.0"},
        {"X-Forwarded-For", "10.0.0.1"},
        {"Cookie", "sid=abc; theme = dark"},
        {"x-forwarded-for", "10.0.0.2"},
        {"cookie", "lang=en,fr; sid=zzz"},
        {"Authorization", "Basic YWxpY2U6c2VjcmV0"},  // alice:secret
        {"Content-Type", "text/plain"},
        {"Content-Length", "12"},
        {"X_Under", "u"},
    };
    ex_->status = 404;
    ex_->body_bytes_sent = 153;
    ex_->header_bytes = 200;
    ex_->request_length = 321;
    ex_->response.status = 404;
    ex_->response.content_length = 153;
    ex_->response.add("Content-Type", "text/html");
    ex_->response.add("Set-Cookie", "a=1");
    ex_->response.add("set-cookie", "b=2");
  }

  // The value, or "<none>" when the variable has no value.
  std::string value(VarId id, std::string arg = {}) {
    std::string out = "prefix:";
    config::Variable v{id, std::move(arg)};
    if (!append_variable(v, *ex_, out)) {
      EXPECT_EQ(out, "prefix:") << "nothing may be appended when there is no value";
      return "<none>";
    }
    EXPECT_EQ(out.compare(0, 7, "prefix:"), 0) << "the value is appended, not assigned";
    return out.substr(7);
  }

  NullSink sink_;
  ConnectionInfo conn_;
  WorkerServices services_;
  config::Server server_;
  std::unique_ptr<Exchange> ex_;
};

struct Row {
  VarId id;
  const char* arg;
  const char* expected;
};

TEST_F(VariablesTest, Table) {
  const Row rows[] = {
      {VarId::http_, "user-agent", "curl/8.0"},
      {VarId::http_, "user_agent", "curl/8.0"},
      {VarId::http_, "x-forwarded-for", "10.0.0.1, 10.0.0.2"},
      {VarId::http_, "cookie", "sid=abc; theme = dark; lang=en,fr; sid=zzz"},
      {VarId::http_, "x-under", "u"},
      {VarId::http_, "host", "example.com:8443"},
      {VarId::http_, "referer", "<none>"},
      {VarId::sent_http_, "content-type", "text/html"},
      {VarId::sent_http_, "content-length", "153"},
      {VarId::sent_http_, "set-cookie", "a=1, b=2"},
      {VarId::sent_http_, "location", "<none>"},
      {VarId::arg_, "x", "1"},
      {VarId::arg_, "name", "Two"},
      {VarId::arg_, "NAME", "Two"},
      {VarId::arg_, "flag", "<none>"},
      {VarId::arg_, "y", ""},
      {VarId::arg_, "z", "<none>"},
      {VarId::cookie_, "sid", "abc"},
      {VarId::cookie_, "theme", "dark"},
      {VarId::cookie_, "lang", "en,fr"},
      {VarId::cookie_, "fr", "<none>"},
      {VarId::cookie_, "SID", "abc"},
      {VarId::cookie_, "si", "<none>"},
      {VarId::args, "", "x=1&Name=Two&flag&y="},
      {VarId::query_string, "", "x=1&Name=Two&flag&y="},
      {VarId::is_args, "", "?"},
      {VarId::uri, "", "/a b/c.html"},
      {VarId::document_uri, "", "/a b/c.html"},
      {VarId::request_uri, "", "/a%20b/c.html?x=1&Name=Two&flag&y="},
      {VarId::request, "", "GET /a%20b/c.html?x=1&Name=Two&flag&y= HTTP/1.1"},
      {VarId::request_method, "", "GET"},
      {VarId::server_protocol, "", "HTTP/1.1"},
      {VarId::scheme, "", "https"},
      {VarId::https, "", "on"},
      {VarId::host, "", "example.com"},
      {VarId::server_name, "", "example.com"},
      {VarId::server_addr, "", "198.51.100.1"},
      {VarId::server_port, "", "8443"},
      {VarId::remote_addr, "", "192.0.2.7"},
      {VarId::remote_port, "", "51234"},
      {VarId::remote_user, "", "alice"},
      {VarId::status, "", "404"},
      {VarId::body_bytes_sent, "", "153"},
      {VarId::bytes_sent, "", "353"},
      {VarId::request_length, "", "321"},
      {VarId::connection, "", "42"},
      {VarId::connection_requests, "", "3"},
      {VarId::content_length, "", "12"},
      {VarId::content_type, "", "text/plain"},
      {VarId::document_root, "", "/srv/www"},
      {VarId::request_filename, "", "/srv/www/a b/c.html"},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(value(r.id, r.arg), r.expected) << "id " << static_cast<int>(r.id) << " arg " << r.arg;
  }
}

TEST_F(VariablesTest, PlainHttpAndOtherVersions) {
  conn_.tls = false;
  EXPECT_EQ(value(VarId::scheme), "http");
  EXPECT_EQ(value(VarId::https), "");
  ex_->req.version = 10;
  EXPECT_EQ(value(VarId::server_protocol), "HTTP/1.0");
  ex_->req.version = 20;
  EXPECT_EQ(value(VarId::server_protocol), "HTTP/2.0");
  ex_->req.method = Method::post;
  ex_->req.method_name = "POST";
  ex_->req.target = "/p";
  EXPECT_EQ(value(VarId::request), "POST /p HTTP/2.0");
  ex_->req.version = 30;
  EXPECT_EQ(value(VarId::server_protocol), "HTTP/3.0");
  // A codec that only set the enum still gives the method's text.
  ex_->req.method_name = {};
  ex_->req.method = Method::del;
  EXPECT_EQ(value(VarId::request_method), "DELETE");
}

TEST_F(VariablesTest, QueryEdgeCases) {
  ex_->req.has_query = false;
  ex_->req.query = {};
  EXPECT_EQ(value(VarId::args), "<none>");
  EXPECT_EQ(value(VarId::is_args), "");
  EXPECT_EQ(value(VarId::arg_, "x"), "<none>");
  ex_->req.has_query = true;  // "/x?"
  EXPECT_EQ(value(VarId::args), "");
  EXPECT_EQ(value(VarId::is_args), "");
  ex_->req.query = "a=1&&b=2&a=3";
  EXPECT_EQ(value(VarId::arg_, "b"), "2");
  EXPECT_EQ(value(VarId::arg_, "a"), "1");
}

TEST_F(VariablesTest, StatusIsThreeDigits) {
  ex_->status = 0;
  EXPECT_EQ(value(VarId::status), "000");
  ex_->status = 200;
  EXPECT_EQ(value(VarId::status), "200");
  ex_->status = 99;
  EXPECT_EQ(value(VarId::status), "099");
}

TEST_F(VariablesTest, HostFallsBackToServerName) {
  ex_->req.host.clear();
  EXPECT_EQ(value(VarId::host), "example.com");
  server_.names.clear();
  EXPECT_EQ(value(VarId::host), "");  // nginx: the server's name, "" without one; not the address
  EXPECT_EQ(value(VarId::server_name), "");
  config::ServerName wild;
  wild.kind = config::ServerName::Kind::wildcard_front;
  wild.name = ".example.org";
  server_.names.push_back(wild);
  EXPECT_EQ(value(VarId::server_name), "*.example.org");
}

TEST_F(VariablesTest, RemoteUserNeedsValidBasicCredentials) {
  auto with_auth = [&](std::string_view v) {
    ex_->req.headers = {{"authorization", v}};
    return value(VarId::remote_user);
  };
  EXPECT_EQ(with_auth("basic   Ym9iOg=="), "bob");         // "bob:" ; scheme without case
  EXPECT_EQ(with_auth("Basic OnB3"), "<none>");             // ":pw": empty user
  EXPECT_EQ(with_auth("Basic Ym9i"), "<none>");             // "bob": no ':'
  EXPECT_EQ(with_auth("Basic Ym9i*jpw"), "<none>");         // bad base64
  EXPECT_EQ(with_auth("Bearer YWxpY2U6c2VjcmV0"), "<none>");
  EXPECT_EQ(with_auth("Basic "), "<none>");
  ex_->req.headers.clear();
  EXPECT_EQ(value(VarId::remote_user), "<none>");
}

TEST_F(VariablesTest, ContentLengthFromFramingWhenNoHeader) {
  ex_->req.headers.clear();
  EXPECT_EQ(value(VarId::content_length), "<none>");
  EXPECT_EQ(value(VarId::content_type), "<none>");
  ex_->req.content_length = 99;
  EXPECT_EQ(value(VarId::content_length), "99");
}

TEST_F(VariablesTest, SentHttpWithoutContentLength) {
  ex_->response = ResponseHead{};
  EXPECT_EQ(value(VarId::sent_http_, "content-length"), "<none>");
  EXPECT_EQ(value(VarId::sent_http_, "content-type"), "<none>");
}

TEST_F(VariablesTest, Captures) {
  ex_->captures.subject = "/img/cat.png";
  ex_->captures.spans = {{0, 12}, {5, 8}, {9, 12}};
  EXPECT_EQ(value(VarId::capture, "1"), "cat");
  EXPECT_EQ(value(VarId::capture, "2"), "png");
  EXPECT_EQ(value(VarId::capture, "0"), "/img/cat.png");
  EXPECT_EQ(value(VarId::capture, "3"), "<none>");
}

TEST_F(VariablesTest, AliasMapsFilenameAndDocumentRoot) {
  config::Location loc;
  loc.match = config::Location::Match::prefix;
  loc.pattern = "/a b/";
  loc.settings.alias = "/data/files/";
  loc.settings.alias_prefix = loc.pattern;
  ex_->location = &loc;
  EXPECT_EQ(value(VarId::document_root), "/data/files/");
  EXPECT_EQ(value(VarId::request_filename), "/data/files/c.html");
  ex_->request_filename = "/data/files/c.html.gz";
  EXPECT_EQ(value(VarId::request_filename), "/data/files/c.html.gz");
}

TEST_F(VariablesTest, RealpathRoot) {
  char tmpl[] = "/tmp/torii_vars_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  std::string link = dir + "_link";
  ASSERT_EQ(symlink(dir.c_str(), link.c_str()), 0);
  server_.settings.root = link;
  char resolved[PATH_MAX];
  ASSERT_NE(realpath(dir.c_str(), resolved), nullptr);
  EXPECT_EQ(value(VarId::realpath_root), resolved);
  ex_->realpath_root = "/set/by/handler";
  EXPECT_EQ(value(VarId::realpath_root), "/set/by/handler");
  unlink(link.c_str());
  rmdir(dir.c_str());
  ex_->realpath_root.clear();
  EXPECT_EQ(value(VarId::realpath_root), "<none>");
}

TEST_F(VariablesTest, TimesAndProcess) {
  EXPECT_TRUE(std::regex_match(value(VarId::time_local),
                               std::regex(R"(\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})")));
  EXPECT_TRUE(std::regex_match(value(VarId::time_iso8601),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d)")));
  std::string msec = value(VarId::msec);
  ASSERT_TRUE(std::regex_match(msec, std::regex(R"(\d{10,}\.\d{3})"))) << msec;
  EXPECT_LE(std::abs(std::stoll(msec) - static_cast<long long>(time(nullptr))), 2);

  ex_->start = std::chrono::steady_clock::now() - std::chrono::milliseconds(1500);
  std::string rt = value(VarId::request_time);
  ASSERT_TRUE(std::regex_match(rt, std::regex(R"(\d+\.\d{3})"))) << rt;
  double secs = std::stod(rt);
  EXPECT_GE(secs, 1.5);
  EXPECT_LT(secs, 60.0);

  EXPECT_EQ(value(VarId::pid), std::to_string(getpid()));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(value(VarId::hostname), host);
}

TEST_F(VariablesTest, RenderTemplate) {
  config::Template t;
  t.source = "$scheme://$host$request_uri [$http_referer]";
  t.parts = {var(VarId::scheme), lit("://"), var(VarId::host), var(VarId::request_uri), lit(" ["),
             var(VarId::http_, "referer"), lit("]")};
  EXPECT_EQ(render(t, *ex_), "https://example.com/a%20b/c.html?x=1&Name=Two&flag&y= []");
  std::string out = "keep ";
  render(t, *ex_, out);
  EXPECT_EQ(out.substr(0, 13), "keep https://");
}

}  // namespace
}  // namespace torii::http
