#include "upstream/health_checker.h"

#include <gtest/gtest.h>

namespace torii::upstream {
namespace {

TEST(HealthVerdict, TakesFailsInARowToGoDownAndPassesInARowToComeBack) {
  HealthChecker::Verdict v;
  EXPECT_FALSE(v.record(false, 3, 2));
  EXPECT_FALSE(v.record(true, 3, 2));  // a pass resets the failures
  EXPECT_FALSE(v.record(false, 3, 2));
  EXPECT_FALSE(v.record(false, 3, 2));
  EXPECT_TRUE(v.up);
  EXPECT_TRUE(v.record(false, 3, 2));
  EXPECT_FALSE(v.up);
  EXPECT_FALSE(v.record(false, 3, 2));  // already down: no change
  EXPECT_FALSE(v.record(true, 3, 2));
  EXPECT_FALSE(v.record(false, 3, 2));  // a failure resets the passes
  EXPECT_FALSE(v.record(true, 3, 2));
  EXPECT_TRUE(v.record(true, 3, 2));
  EXPECT_TRUE(v.up);
}

TEST(HealthVerdict, OneOfEachByDefault) {
  HealthChecker::Verdict v;
  EXPECT_TRUE(v.record(false, 1, 1));
  EXPECT_TRUE(v.record(true, 1, 1));
  EXPECT_TRUE(v.up);
}

}  // namespace
}  // namespace torii::upstream
