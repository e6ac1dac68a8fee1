#include "core/temp_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace torii::core {
namespace {

TEST(TempFile, HashedNamesAsNginxLaysThemOut) {
  // ngx_create_hashed_filename: level 1 is the last digits, level 2 the ones before.
  EXPECT_EQ(hashed_temp_name("/t", {0, 0, 0}, 123), "/t/0000000123");
  EXPECT_EQ(hashed_temp_name("/t", {1, 0, 0}, 123), "/t/3/0000000123");
  EXPECT_EQ(hashed_temp_name("/t", {1, 2, 0}, 123), "/t/3/12/0000000123");
  EXPECT_EQ(hashed_temp_name("/t", {2, 2, 2}, 1234567890), "/t/90/78/56/1234567890");
  EXPECT_EQ(hashed_temp_name("/t", {3, 0, 0}, 4294967295u), "/t/295/4294967295");
}

TEST(TempFile, CreatesTheLevelFoldersOnDemand) {
  char tmpl[] = "/tmp/torii-temp-file-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string base = std::string(tmpl) + "/body";  // made too
  std::string name;
  const int fd = create_temp_file(base, {1, 2, 0}, name);
  ASSERT_GE(fd, 0) << name;
  ::close(fd);
  // base/D/DD/NNNNNNNNNN with D and DD the number's last three digits.
  ASSERT_EQ(name.size(), base.size() + 1 + 1 + 1 + 2 + 1 + 10);
  const std::string number = name.substr(name.size() - 10);
  EXPECT_EQ(name, base + "/" + number.substr(9, 1) + "/" + number.substr(7, 2) + "/" + number);
  struct stat st {};
  ASSERT_EQ(::stat(name.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A second file: a different name, whatever folder it hashes to.
  std::string second;
  const int fd2 = create_temp_file(base, {1, 2, 0}, second);
  ASSERT_GE(fd2, 0);
  ::close(fd2);
  EXPECT_NE(second, name);
  ::unlink(name.c_str());
  ::unlink(second.c_str());
  std::string cmd = std::string("rm -rf ") + tmpl;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(TempFile, FailsWithErrnoWhenTheParentIsMissing) {
  std::string name;
  errno = 0;
  EXPECT_EQ(create_temp_file("/nonexistent-torii-dir/a/b", {1, 0, 0}, name), -1);
  EXPECT_EQ(errno, ENOENT);
}

}  // namespace
}  // namespace torii::core
