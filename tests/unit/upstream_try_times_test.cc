#include "upstream/try_times.h"

#include <gtest/gtest.h>

namespace torii::upstream {
namespace {

TEST(TryTimes, SecondsWithMillisecondsJoinedAndADashForATryThatNeverGotThere) {
  std::string list;
  append_try_time(list, 0);
  append_try_time(list, 7);
  append_try_time(list, -1);
  append_try_time(list, 1050);
  append_try_time(list, 123456789);
  EXPECT_EQ(list, "0.000, 0.007, -, 1.050, 123456.789");
}

}  // namespace
}  // namespace torii::upstream
