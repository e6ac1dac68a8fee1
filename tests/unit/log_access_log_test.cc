#include "log/access_log.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "http/exchange.h"
#include "log/error_log.h"

namespace torii::log {
namespace {

using config::VarId;

class NullSink : public http::ResponseSink {
 public:
  void send_head(const http::ResponseHead&) override {}
  void send_body(std::string_view) override {}
  void send_file(std::shared_ptr<const http::OpenFile>, int64_t, int64_t) override {}
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

// nginx's predefined "combined" format.
std::shared_ptr<config::LogFormat> combined() {
  auto f = std::make_shared<config::LogFormat>();
  f->name = "combined";
  f->format.source =
      "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent "
      "\"$http_referer\" \"$http_user_agent\"";
  f->format.parts = {var(VarId::remote_addr),     lit(" - "),
                     var(VarId::remote_user),     lit(" ["),
                     var(VarId::time_local),      lit("] \""),
                     var(VarId::request),         lit("\" "),
                     var(VarId::status),          lit(" "),
                     var(VarId::body_bytes_sent), lit(" \""),
                     var(VarId::http_, "referer"), lit("\" \""),
                     var(VarId::http_, "user-agent"), lit("\"")};
  return f;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

class AccessLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/torii_access_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/access.log";

    conn_.remote_addr = "203.0.113.9";
    ex_ = std::make_unique<http::Exchange>(sink_, conn_, services_);
    ex_->server = &server_;
    http::RequestHead& r = ex_->req;
    r.method = http::Method::get;
    r.method_name = "GET";
    r.target = "/index.html";
    r.path = "/index.html";
    r.version = 11;
    r.headers = {{"Host", "example.com"}, {"User-Agent", "curl/8.4.0"}};
    ex_->status = 200;
    ex_->body_bytes_sent = 615;
  }

  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  // Points the server's settings at one access_log.
  void use_log(std::shared_ptr<const config::LogFormat> fmt, size_t buffer_size = 0,
               config::Ms flush = config::Ms{0}, std::string path = {}, int gzip_level = 0) {
    config::AccessLog al;
    al.path = path.empty() ? path_ : path;
    al.format = std::move(fmt);
    al.buffering.size = buffer_size;
    al.buffering.flush = flush;
    al.buffering.gzip_level = gzip_level;
    server_.settings.access_logs = {al};
  }

  std::string dir_;
  std::string path_;
  NullSink sink_;
  http::ConnectionInfo conn_;
  http::WorkerServices services_;
  config::Server server_;
  std::unique_ptr<http::Exchange> ex_;
};

TEST_F(AccessLogTest, CombinedLineAsNginxPrintsIt) {
  use_log(combined());
  AccessLogWriter w;
  w.log(*ex_);
  std::string text = slurp(path_);
  std::regex line(
      R"re(203\.0\.113\.9 - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] )re"
      R"re("GET /index\.html HTTP/1\.1" 200 615 "-" "curl/8\.4\.0"\n)re");
  EXPECT_TRUE(std::regex_match(text, line)) << text;
}

TEST_F(AccessLogTest, DefaultEscapingAppliesToValuesOnly) {
  auto f = std::make_shared<config::LogFormat>();
  f->format.parts = {lit("\"lit\\\" "), var(VarId::http_, "user-agent"), lit(" "), var(VarId::http_, "x-none"),
                     lit(" "), var(VarId::remote_user)};
  use_log(f);
  ex_->req.headers = {{"User-Agent", "a\"b\\c\x01\x7f\xc3\xa9 d"}};
  AccessLogWriter w;
  w.log(*ex_);
  EXPECT_EQ(slurp(path_), "\"lit\\\" a\\x22b\\x5Cc\\x01\\x7F\\xC3\\xA9 d - -\n");
}

TEST_F(AccessLogTest, JsonEscapingAndEmptyForMissing) {
  auto f = std::make_shared<config::LogFormat>();
  f->json_escape = true;
  f->format.parts = {lit("{\"ua\":\""), var(VarId::http_, "user-agent"), lit("\",\"ref\":\""),
                     var(VarId::http_, "referer"), lit("\",\"status\":"), var(VarId::status), lit("}")};
  use_log(f);
  ex_->req.headers = {{"User-Agent", "q\"b\\s\n\t\x01\xc3\xa9"}};
  AccessLogWriter w;
  w.log(*ex_);
  EXPECT_EQ(slurp(path_), "{\"ua\":\"q\\\"b\\\\s\\n\\t\\u0001\xc3\xa9\",\"ref\":\"\",\"status\":200}\n");
}

TEST_F(AccessLogTest, UnbufferedWritesEachLine) {
  use_log(combined(), 0);
  AccessLogWriter w;
  w.log(*ex_);
  size_t one = slurp(path_).size();
  ASSERT_GT(one, 0u);
  w.log(*ex_);
  EXPECT_EQ(slurp(path_).size(), 2 * one);
}

TEST_F(AccessLogTest, BufferWrittenWhenFullAndOnFlushAll) {
  auto f = std::make_shared<config::LogFormat>();
  f->format.parts = {var(VarId::request_uri)};  // "/index.html\n": 12 bytes
  use_log(f, 40);
  AccessLogWriter w;
  w.log(*ex_);
  w.log(*ex_);
  w.log(*ex_);
  EXPECT_EQ(slurp(path_), "") << "36 bytes fit in the 40-byte buffer";
  w.log(*ex_);  // would make 48: the first three go out
  EXPECT_EQ(slurp(path_).size(), 36u);
  w.flush(false);  // no flush interval: stays buffered
  EXPECT_EQ(slurp(path_).size(), 36u);
  w.flush(true);
  EXPECT_EQ(slurp(path_).size(), 48u);

  // A line longer than the whole buffer goes straight out.
  ex_->req.target = "/a-very-long-target-that-does-not-fit-in-forty-bytes";
  w.log(*ex_);
  EXPECT_EQ(slurp(path_).size(), 48u + ex_->req.target.size() + 1);
}

// gzip: each buffer written is one gzip member; gzip -dc reads the series.
TEST_F(AccessLogTest, GzipWritesEachBufferAsOneMember) {
  auto f = std::make_shared<config::LogFormat>();
  f->format.parts = {var(VarId::request_uri)};  // "/index.html\n": 12 bytes
  use_log(f, 40, config::Ms{0}, {}, 6);
  AccessLogWriter w;
  for (int i = 0; i < 4; ++i) w.log(*ex_);  // the fourth line sends the first three
  const std::string first = slurp(path_);
  ASSERT_GE(first.size(), 18u);
  EXPECT_EQ(first.substr(0, 3), std::string("\x1f\x8b\x08", 3)) << "a gzip member";
  w.flush(true);
  EXPECT_GT(slurp(path_).size(), first.size()) << "the last line, a second member";
  const std::string cmd = "gzip -dc '" + path_ + "' > '" + path_ + ".txt'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string lines;
  for (int i = 0; i < 4; ++i) lines += "/index.html\n";
  EXPECT_EQ(slurp(path_ + ".txt"), lines);
}

TEST_F(AccessLogTest, FlushIntervalCountsFromFirstBufferedLine) {
  auto f = std::make_shared<config::LogFormat>();
  f->format.parts = {var(VarId::request_uri)};
  use_log(f, 4096, config::Ms{3'600'000});
  {
    AccessLogWriter w;
    w.log(*ex_);
    w.flush(false);
    EXPECT_EQ(slurp(path_), "") << "an hour has not passed";
  }
  EXPECT_EQ(slurp(path_), "/index.html\n") << "the destructor flushes";

  use_log(f, 4096, config::Ms{1});
  AccessLogWriter w;
  w.log(*ex_);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  w.flush(false);
  EXPECT_EQ(slurp(path_), "/index.html\n/index.html\n");
}

TEST_F(AccessLogTest, ReopenAfterRename) {
  auto f = std::make_shared<config::LogFormat>();
  f->format.parts = {var(VarId::request_uri)};
  use_log(f);
  AccessLogWriter w;
  w.log(*ex_);
  std::string rotated = path_ + ".1";
  ASSERT_EQ(std::rename(path_.c_str(), rotated.c_str()), 0);
  w.log(*ex_);  // still the old descriptor
  EXPECT_EQ(slurp(rotated), "/index.html\n/index.html\n");
  EXPECT_FALSE(exists(path_));

  w.reopen();
  EXPECT_TRUE(exists(path_)) << "reopen creates the new file at once";
  w.log(*ex_);
  EXPECT_EQ(slurp(path_), "/index.html\n");
  EXPECT_EQ(slurp(rotated), "/index.html\n/index.html\n") << "the old file stops growing";
}

TEST_F(AccessLogTest, ReopenFlushesBufferedLinesIntoTheOldFile) {
  auto f = std::make_shared<config::LogFormat>();
  f->format.parts = {var(VarId::request_uri)};
  use_log(f, 4096);
  AccessLogWriter w;
  w.log(*ex_);
  std::string rotated = path_ + ".1";
  ASSERT_EQ(std::rename(path_.c_str(), rotated.c_str()), 0);
  w.reopen();
  EXPECT_EQ(slurp(rotated), "/index.html\n");
  EXPECT_EQ(slurp(path_), "");
}

TEST_F(AccessLogTest, OffOrNoLogsWritesNothing) {
  use_log(combined());
  server_.settings.access_log_off = true;
  AccessLogWriter w;
  w.log(*ex_);
  EXPECT_FALSE(exists(path_));
  server_.settings.access_log_off = false;
  server_.settings.access_logs.clear();
  w.log(*ex_);
  EXPECT_FALSE(exists(path_));
}

TEST_F(AccessLogTest, LocationSettingsWin) {
  use_log(combined());
  config::Location loc;
  loc.settings.access_log_off = true;
  ex_->location = &loc;
  AccessLogWriter w;
  w.log(*ex_);
  EXPECT_FALSE(exists(path_));
}

TEST_F(AccessLogTest, SeveralFilesAndFormats) {
  auto uri = std::make_shared<config::LogFormat>();
  uri->format.parts = {var(VarId::request_uri)};
  auto status = std::make_shared<config::LogFormat>();
  status->format.parts = {var(VarId::status)};
  std::string second = dir_ + "/second.log";
  std::string third = dir_ + "/third.log";
  config::AccessLog a{path_, uri, 0, config::Ms{0}};
  config::AccessLog b{second, uri, 0, config::Ms{0}};
  config::AccessLog c{third, status, 0, config::Ms{0}};
  server_.settings.access_logs = {a, b, c};
  AccessLogWriter w;
  w.log(*ex_);
  EXPECT_EQ(slurp(path_), "/index.html\n");
  EXPECT_EQ(slurp(second), "/index.html\n");
  EXPECT_EQ(slurp(third), "200\n");
}

TEST_F(AccessLogTest, FailedOpenIsReportedOnceAndLinesDropped) {
  std::string err_path = dir_ + "/error.log";
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{err_path, config::LogLevel::error}));
  std::string bad = dir_ + "/missing/dir/access.log";
  use_log(combined(), 0, config::Ms{0}, bad);
  {
    AccessLogWriter w;
    w.log(*ex_);
    w.log(*ex_);
    w.flush(true);
  }
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{"stderr", config::LogLevel::error}));
  std::string errors = slurp(err_path);
  std::string expected = "open() \"" + bad + "\" failed (2: No such file or directory)\n";
  ASSERT_NE(errors.find(expected), std::string::npos) << errors;
  EXPECT_EQ(errors.find(expected), errors.rfind(expected)) << "reported once: " << errors;
}

}  // namespace
}  // namespace torii::log
