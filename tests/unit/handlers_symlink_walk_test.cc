#include "handlers/symlink_walk.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace torii::handlers {
namespace {

using Mode = SymlinkPolicy::Mode;

TEST(SymlinkPolicyFor, FromDecidesWhereTheWalkStarts) {
  EXPECT_EQ(symlink_policy_for(Mode::off, "/srv", "/srv/a"), SymlinkPolicy{});
  EXPECT_EQ(symlink_policy_for(Mode::on, "", "/srv/a"), (SymlinkPolicy{Mode::on, 0}));
  EXPECT_EQ(symlink_policy_for(Mode::on, "/srv", "/srv/a"), (SymlinkPolicy{Mode::on, 4}));
  EXPECT_EQ(symlink_policy_for(Mode::on, "/srv/", "/srv/a"), (SymlinkPolicy{Mode::on, 4}));
  // Not a whole component, or not a prefix: the walk starts at "/".
  EXPECT_EQ(symlink_policy_for(Mode::on, "/sr", "/srv/a"), (SymlinkPolicy{Mode::on, 0}));
  EXPECT_EQ(symlink_policy_for(Mode::on, "/other", "/srv/a"), (SymlinkPolicy{Mode::on, 0}));
  EXPECT_EQ(symlink_policy_for(Mode::on, "/srv/a/b", "/srv/a"), (SymlinkPolicy{Mode::on, 0}));
  // The trusted prefix itself: no check at all.
  EXPECT_EQ(symlink_policy_for(Mode::if_not_owner, "/srv/a", "/srv/a"), SymlinkPolicy{});
}

class SymlinkWalkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/torii_symlink_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(mkdir((dir_ + "/sub").c_str(), 0755), 0);
    FILE* f = fopen((dir_ + "/sub/file").c_str(), "w");
    ASSERT_NE(f, nullptr);
    fclose(f);
    ASSERT_EQ(symlink("file", (dir_ + "/sub/link").c_str()), 0);
    ASSERT_EQ(symlink("sub", (dir_ + "/dirlink").c_str()), 0);
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  // The errno of a failed open, 0 when it opened.
  int open_err(const std::string& rel, SymlinkPolicy p) {
    errno = 0;
    const int fd = open_with_policy(dir_ + rel, O_RDONLY, p);
    if (fd < 0) return errno;
    close(fd);
    return 0;
  }
  std::string dir_;
};

TEST_F(SymlinkWalkTest, OffFollowsEverything) {
  EXPECT_EQ(open_err("/sub/link", {}), 0);
  EXPECT_EQ(open_err("/dirlink/file", {}), 0);
}

TEST_F(SymlinkWalkTest, OnRefusesLinksWhereverTheyAre) {
  const SymlinkPolicy on{Mode::on, 0};
  EXPECT_EQ(open_err("/sub/file", on), 0);
  EXPECT_EQ(open_err("//sub//file", on), 0);
  EXPECT_EQ(open_err("/sub/", on), 0);  // a directory, reopened through "."
  EXPECT_EQ(open_err("/sub/link", on), ELOOP);
  EXPECT_EQ(open_err("/dirlink/file", on), ENOTDIR);
  EXPECT_EQ(open_err("/sub/missing", on), ENOENT);
}

TEST_F(SymlinkWalkTest, FromTrustsItsPrefix) {
  SymlinkPolicy p = symlink_policy_for(Mode::on, dir_ + "/dirlink", dir_ + "/dirlink/file");
  EXPECT_EQ(open_err("/dirlink/file", p), 0);
  p = symlink_policy_for(Mode::on, dir_ + "/dirlink", dir_ + "/dirlink/link");
  EXPECT_EQ(open_err("/dirlink/link", p), ELOOP);
}

TEST_F(SymlinkWalkTest, IfNotOwnerFollowsLinksOfTheSameOwner) {
  const SymlinkPolicy p{Mode::if_not_owner, 0};
  EXPECT_EQ(open_err("/sub/link", p), 0);
  EXPECT_EQ(open_err("/dirlink/file", p), 0);
  if (geteuid() != 0) GTEST_SKIP() << "lchown to another owner needs root";
  ASSERT_EQ(lchown((dir_ + "/sub/link").c_str(), 65534, 65534), 0);
  EXPECT_EQ(open_err("/sub/link", p), ELOOP);
}

}  // namespace
}  // namespace torii::handlers
