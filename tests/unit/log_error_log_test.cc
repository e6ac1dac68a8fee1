#include "log/error_log.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace torii::log {
namespace {

using config::LogLevel;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

class ErrorLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/torii_errlog_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/error.log";
  }
  void TearDown() override {
    // The log is process-wide: leave it as the next test expects to find it.
    open_error_log(config::ErrorLogConfig{"stderr", LogLevel::error});
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string dir_;
  std::string path_;
};

TEST_F(ErrorLogTest, LineFormat) {
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{path_, LogLevel::info}));
  TORII_LOG(info, "hello %d from \"%s\"", 5, "test");
  TORII_LOG(crit, "second");
  std::vector<std::string> lines = lines_of(slurp(path_));
  ASSERT_EQ(lines.size(), 2u);
  std::string pid = std::to_string(getpid());
  std::regex first(R"(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[info\] )" + pid + R"(#\d+: hello 5 from "test")");
  EXPECT_TRUE(std::regex_match(lines[0], first)) << lines[0];
  std::regex second(R"(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[crit\] )" + pid + R"(#\d+: second)");
  EXPECT_TRUE(std::regex_match(lines[1], second)) << lines[1];
  EXPECT_EQ(slurp(path_).back(), '\n');
}

TEST_F(ErrorLogTest, LevelFilter) {
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{path_, LogLevel::warn}));
  EXPECT_FALSE(enabled(LogLevel::debug));
  EXPECT_FALSE(enabled(LogLevel::notice));
  EXPECT_TRUE(enabled(LogLevel::warn));
  EXPECT_TRUE(enabled(LogLevel::emerg));
  TORII_LOG(debug, "d");
  TORII_LOG(info, "i");
  TORII_LOG(notice, "n");
  TORII_LOG(warn, "w");
  TORII_LOG(error, "e");
  write(LogLevel::info, "direct info");  // filtered without the macro too
  write(LogLevel::alert, "direct alert");
  std::vector<std::string> lines = lines_of(slurp(path_));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("[warn] "), std::string::npos);
  EXPECT_TRUE(lines[0].ends_with(": w"));
  EXPECT_NE(lines[1].find("[error] "), std::string::npos);
  EXPECT_NE(lines[2].find("[alert] "), std::string::npos);
  EXPECT_TRUE(lines[2].ends_with(": direct alert"));
}

TEST_F(ErrorLogTest, DefaultsToErrorLevelOnStderr) {
  // TearDown of any earlier test, or the program start, leaves stderr at error.
  EXPECT_FALSE(enabled(LogLevel::warn));
  EXPECT_TRUE(enabled(LogLevel::error));
}

TEST_F(ErrorLogTest, LongMessagesAreCutToOneLine) {
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{path_, LogLevel::error}));
  std::string big(10000, 'x');
  TORII_LOG(error, "%s", big.c_str());
  std::string text = slurp(path_);
  EXPECT_LE(text.size(), 4096u);
  EXPECT_GT(text.size(), 4000u);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(lines_of(text).size(), 1u);
}

TEST_F(ErrorLogTest, PreservesErrno) {
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{path_, LogLevel::error}));
  errno = EACCES;
  TORII_LOG(error, "x");
  EXPECT_EQ(errno, EACCES);
}

TEST_F(ErrorLogTest, FailedOpenKeepsTheOldLog) {
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{path_, LogLevel::error}));
  errno = 0;
  EXPECT_FALSE(open_error_log(config::ErrorLogConfig{dir_ + "/no/such/dir.log", LogLevel::debug}));
  EXPECT_EQ(errno, ENOENT);
  EXPECT_FALSE(enabled(LogLevel::debug)) << "the old level stays too";
  TORII_LOG(error, "still here");
  EXPECT_NE(slurp(path_).find("still here"), std::string::npos);
}

TEST_F(ErrorLogTest, ReopenAfterRename) {
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{path_, LogLevel::error}));
  TORII_LOG(error, "one");
  std::string rotated = path_ + ".1";
  ASSERT_EQ(std::rename(path_.c_str(), rotated.c_str()), 0);
  TORII_LOG(error, "two");
  reopen_error_log();
  TORII_LOG(error, "three");
  std::vector<std::string> old_lines = lines_of(slurp(rotated));
  ASSERT_EQ(old_lines.size(), 2u);
  EXPECT_TRUE(old_lines[1].ends_with(": two"));
  std::vector<std::string> new_lines = lines_of(slurp(path_));
  ASSERT_EQ(new_lines.size(), 1u);
  EXPECT_TRUE(new_lines[0].ends_with(": three"));
}

TEST_F(ErrorLogTest, SwitchingFilesAndBackToStderr) {
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{path_, LogLevel::error}));
  TORII_LOG(error, "first");
  std::string other = dir_ + "/other.log";
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{other, LogLevel::error}));
  TORII_LOG(error, "second");
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{"stderr", LogLevel::error}));
  TORII_LOG(error, "to stderr (expected in test output)");
  EXPECT_EQ(lines_of(slurp(path_)).size(), 1u);
  std::vector<std::string> lines = lines_of(slurp(other));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].ends_with(": second"));
}

TEST_F(ErrorLogTest, ThreadsNeverInterleaveAndGetTheirOwnIds) {
  ASSERT_TRUE(open_error_log(config::ErrorLogConfig{path_, LogLevel::info}));
  constexpr int kThreads = 4;
  constexpr int kLines = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      std::string payload(100 + t * 50, static_cast<char>('a' + t));
      for (int i = 0; i < kLines; ++i) TORII_LOG(info, "t%d %s", t, payload.c_str());
    });
  }
  // Reopen while they write: no line may be lost or torn.
  reopen_error_log();
  for (auto& th : threads) th.join();
  std::vector<std::string> lines = lines_of(slurp(path_));
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kLines));
  std::regex shape(R"(.* \[info\] \d+#(\d+): t(\d) ([a-d]+))");
  std::map<int, std::set<std::string>> tids_by_thread;
  std::set<std::string> tids;
  for (const std::string& l : lines) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, shape)) << l;
    int t = std::stoi(m[2]);
    EXPECT_EQ(m[3].str(), std::string(100 + t * 50, static_cast<char>('a' + t)));
    tids_by_thread[t].insert(m[1].str());
    tids.insert(m[1].str());
  }
  ASSERT_EQ(tids_by_thread.size(), static_cast<size_t>(kThreads));
  for (const auto& [t, ids] : tids_by_thread) EXPECT_EQ(ids.size(), 1u) << "thread " << t;
  EXPECT_EQ(tids.size(), static_cast<size_t>(kThreads)) << "distinct ids";
}

}  // namespace
}  // namespace torii::log
