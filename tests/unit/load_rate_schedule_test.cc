#include "load/rate_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "load/request_source.h"

namespace torii::load {
namespace {

constexpr int64_t kStart = 5'000'000'000;  // an arbitrary monotonic time

TEST(LoadRateSchedule, OneThreadSendsAtEvenIntervals) {
  RateSchedule s(1000, 0, 1, 0);
  s.start(kStart);
  EXPECT_EQ(s.next_due(), kStart);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.take(), kStart + i * 1'000'000);
  EXPECT_EQ(s.next_due(), kStart + 5'000'000);
}

TEST(LoadRateSchedule, ThreadsInterleaveIntoOneEvenPace) {
  // 3 threads at 3000/s in all: together one request every 333.3 µs, each
  // thread every 1 ms, offset by its index.
  const unsigned threads = 3;
  std::vector<int64_t> all;
  for (unsigned t = 0; t < threads; ++t) {
    RateSchedule s(3000, t, threads, 0);
    s.start(kStart);
    for (int i = 0; i < 1000; ++i) all.push_back(s.take());
  }
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) {
    int64_t want = kStart + int64_t(std::llround(double(i) * 1e9 / 3000));
    ASSERT_EQ(all[i], want) << i;
  }
}

TEST(LoadRateSchedule, NoDriftOverALongRun) {
  // 7 per second does not divide a second evenly; a time accumulated by
  // adding a rounded interval would drift, the computed one does not.
  RateSchedule s(7, 0, 1, 0);
  s.start(0);
  int64_t last = 0;
  for (int i = 0; i < 7 * 3600; ++i) last = s.take();
  int64_t want = int64_t(std::llround((7.0 * 3600 - 1) * 1e9 / 7));
  EXPECT_EQ(last, want);
  EXPECT_EQ(s.next_due(), 3600 * int64_t(1'000'000'000));
}

TEST(LoadRateSchedule, TotalIsSplitExactlyAcrossThreads) {
  for (uint64_t total : {1ull, 2ull, 5ull, 1000ull, 1001ull}) {
    for (unsigned threads : {1u, 2u, 3u, 4u}) {
      uint64_t sum = 0;
      for (unsigned t = 0; t < threads; ++t) {
        RateSchedule s(100, t, threads, total);
        s.start(0);
        uint64_t n = 0;
        while (!s.exhausted()) {
          s.take();
          ++n;
        }
        EXPECT_EQ(n, s.limit());
        EXPECT_EQ(s.next_due(), INT64_MAX);
        sum += n;
      }
      EXPECT_EQ(sum, total) << total << " over " << threads;
    }
  }
}

TEST(LoadRateSchedule, WaitingCountsDueRequestsNotYetTaken) {
  RateSchedule s(1000, 0, 1, 0);  // one per ms
  s.start(kStart);
  EXPECT_EQ(s.waiting(kStart - 1), 0u);
  EXPECT_EQ(s.waiting(kStart), 1u);  // request 0 is due at the start
  EXPECT_EQ(s.waiting(kStart + 999'999), 1u);
  EXPECT_EQ(s.waiting(kStart + 1'000'000), 2u);
  EXPECT_EQ(s.waiting(kStart + 10'500'000), 11u);
  EXPECT_FALSE(s.due(kStart - 1));
  EXPECT_TRUE(s.due(kStart));
  s.take();
  s.take();
  EXPECT_EQ(s.waiting(kStart + 10'500'000), 9u);
  // A thread of several sees only its own requests.
  RateSchedule t(1000, 1, 2, 0);
  t.start(kStart);
  EXPECT_EQ(t.waiting(kStart), 0u);            // request 1 is due at +1 ms
  EXPECT_EQ(t.waiting(kStart + 1'000'000), 1u);
  EXPECT_EQ(t.waiting(kStart + 4'000'000), 2u);  // requests 1 and 3
}

TEST(LoadRateSchedule, LateTakersKeepTheirDueTime) {
  // A request taken long after it was due still reports when it was due,
  // so its latency counts the wait (no coordinated omission).
  RateSchedule s(100, 0, 1, 0);  // one per 10 ms
  s.start(kStart);
  int64_t late = kStart + 1'000'000'000;  // a one-second stall
  uint64_t backlog = s.waiting(late);
  EXPECT_EQ(backlog, 101u);
  for (uint64_t i = 0; i < backlog; ++i) {
    ASSERT_TRUE(s.due(late));
    EXPECT_EQ(s.take(), kStart + int64_t(i) * 10'000'000);
  }
  EXPECT_FALSE(s.due(late));
}

TEST(LoadRequestSource, ClosedLoopCountsExactlyAndTakesBackRetries) {
  RequestSource src(3);
  src.start(kStart);
  EXPECT_FALSE(src.open_loop());
  EXPECT_TRUE(src.available(0));
  EXPECT_EQ(src.take(111), 111);  // closed loop: latency from when it leaves
  src.take(112);
  src.take(113);
  EXPECT_FALSE(src.available(200));
  EXPECT_TRUE(src.exhausted());
  src.give_back(113);
  EXPECT_FALSE(src.exhausted());
  EXPECT_EQ(src.take(300), 300);
  EXPECT_TRUE(src.exhausted());
}

TEST(LoadRequestSource, UnlimitedClosedLoopNeverRunsOut) {
  RequestSource src(UINT64_MAX);
  for (int i = 0; i < 1000; ++i) src.take(i);
  EXPECT_TRUE(src.available(0));
  EXPECT_FALSE(src.exhausted());
}

TEST(LoadRequestSource, OpenLoopGivesBackWithTheOriginalDueTime) {
  RequestSource src(RateSchedule(1000, 0, 1, 2));
  src.reserve(4);
  src.start(kStart);
  EXPECT_TRUE(src.open_loop());
  EXPECT_FALSE(src.available(kStart - 1));
  int64_t first = src.take(kStart);
  EXPECT_EQ(first, kStart);
  EXPECT_FALSE(src.available(kStart + 10));
  src.give_back(first);  // refused by the server: goes again, still late from kStart
  EXPECT_TRUE(src.available(kStart + 10));
  EXPECT_EQ(src.next_due(), INT64_MIN);
  EXPECT_EQ(src.take(kStart + 20), kStart);
  EXPECT_EQ(src.next_due(), kStart + 1'000'000);
  EXPECT_EQ(src.take(kStart + 2'000'000), kStart + 1'000'000);
  EXPECT_TRUE(src.exhausted());
}

}  // namespace
}  // namespace torii::load
