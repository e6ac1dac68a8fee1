#include "stream/rate_limit.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace torii::stream {
namespace {

TEST(StreamRateLimit, NoRateAllowsTheWholeRoom) {
  RateLimit r;
  int64_t delay = -1;
  EXPECT_EQ(r.allowance(1'000'000, 5'000, 4096, delay), 4096u);
  EXPECT_EQ(delay, 0);
  EXPECT_EQ(r.rest_after(4096), 0);
}

TEST(StreamRateLimit, FirstSecondsWorthPassesAtOnce) {
  RateLimit r;
  r.start(1000, 10'500);
  int64_t delay = 0;
  EXPECT_EQ(r.allowance(0, 10'500, 16384, delay), 1000u);
  EXPECT_EQ(r.rest_after(1000), 1000);
  EXPECT_EQ(r.allowance(400, 10'900, 16384, delay), 600u);
  // The next whole second adds another second's worth.
  EXPECT_EQ(r.allowance(1000, 11'000, 16384, delay), 1000u);
  EXPECT_EQ(r.allowance(1000, 11'000, 300, delay), 300u);
}

TEST(StreamRateLimit, OverdrawnMustRest) {
  RateLimit r;
  r.start(1000, 0);
  int64_t delay = 0;
  EXPECT_EQ(r.allowance(1000, 900, 16384, delay), 0u);
  EXPECT_EQ(delay, 1);
  EXPECT_EQ(r.allowance(1500, 900, 16384, delay), 0u);
  EXPECT_EQ(delay, 501);
}

TEST(StreamRateLimit, HugeRateDoesNotOverflow) {
  RateLimit r;
  r.start(UINT64_MAX / 2, 0);
  int64_t delay = 0;
  EXPECT_EQ(r.allowance(0, 100'000, 16384, delay), 16384u);
}

}  // namespace
}  // namespace torii::stream
