#include "core/fd_budget.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace torii::core {
namespace {

TEST(FdBudget, EveryConnectionFitsBeforeStart) {
  FdBudget b;
  b.add(1'000'000);
  EXPECT_TRUE(b.room_for_connection());
}

TEST(FdBudget, StopsBeforeTheLastDescriptorsAndResumesAsTheyComeBack) {
  FdBudget b;
  b.start(256, 20);  // reserve: 16 + 256 / 32 = 24
  EXPECT_EQ(b.reserve(), 24);
  int connections = 0;
  while (b.room_for_connection()) {
    b.add(FdBudget::kPerConnection);
    ++connections;
  }
  EXPECT_EQ(connections, (256 - 20 - 24) / 2);
  // Each connection may still open its file or upstream socket.
  EXPECT_LE(b.in_use() + b.reserve(), 256);
  b.add(-FdBudget::kPerConnection);
  EXPECT_TRUE(b.room_for_connection());
  b.add(1);  // an idle upstream connection
  EXPECT_FALSE(b.room_for_connection());
}

TEST(FdBudget, ATinyLimitStillServes) {
  FdBudget b;
  b.start(32, 24);
  EXPECT_EQ(b.reserve(), 2);
  EXPECT_TRUE(b.room_for_connection());
  b.add(FdBudget::kPerConnection);
  EXPECT_TRUE(b.room_for_connection());
  b.add(FdBudget::kPerConnection * 2);
  EXPECT_FALSE(b.room_for_connection());
  b.start(20, 24);  // less than what is open at start: one connection at a time
  b.add(-FdBudget::kPerConnection * 3);
  EXPECT_TRUE(b.room_for_connection());
}

TEST(FdBudget, CountsThisProcess) {
  const int64_t before = FdBudget::count_open();
  int fd = dup(0);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(FdBudget::count_open(), before + 1);
  close(fd);
  EXPECT_GT(FdBudget::current_limit(), 0);
}

}  // namespace
}  // namespace torii::core
