#include "handlers/request_body_buffer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>

namespace torii::handlers {
namespace {

class RequestBodyBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/torii_body_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

std::string file_bytes(const RequestBodyBuffer& b) {
  std::string s(size_t(b.size()), '\0');
  EXPECT_EQ(pread(b.fd(), s.data(), s.size(), 0), ssize_t(s.size()));
  return s;
}

TEST_F(RequestBodyBufferTest, SmallBodyStaysInMemory) {
  RequestBodyBuffer b(16, dir_ + "/temp");
  ASSERT_TRUE(b.append("hello "));
  ASSERT_TRUE(b.append("world"));
  ASSERT_TRUE(b.append(""));
  EXPECT_FALSE(b.in_file());
  EXPECT_EQ(b.memory(), "hello world");
  EXPECT_EQ(b.size(), 11);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/temp"));  // made only when needed
}

TEST_F(RequestBodyBufferTest, BeyondTheLimitTheWholeBodyMovesToANamelessFile) {
  RequestBodyBuffer b(16, dir_ + "/temp");
  ASSERT_TRUE(b.append("0123456789"));
  ASSERT_TRUE(b.append("abcdefghij"));  // 20 > 16
  ASSERT_TRUE(b.append("KLMNO"));
  EXPECT_TRUE(b.in_file());
  EXPECT_TRUE(b.memory().empty());
  EXPECT_EQ(b.size(), 25);
  EXPECT_EQ(file_bytes(b), "0123456789abcdefghijKLMNO");
  EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/temp"));
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/temp"));
}

TEST_F(RequestBodyBufferTest, AnUnusableTempPathFailsWithTheReason) {
  const std::string file = dir_ + "/plain-file";
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  RequestBodyBuffer b(4, file + "/temp");
  EXPECT_TRUE(b.append("1234"));
  errno = 0;
  EXPECT_FALSE(b.append("5"));
  EXPECT_EQ(errno, ENOTDIR);
  EXPECT_STREQ(b.what(), "open() temporary file");
}

}  // namespace
}  // namespace torii::handlers
