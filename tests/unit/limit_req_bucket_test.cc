// limit_req's leaky bucket: the arithmetic alone, then the shared table
// (entries, holds, eviction, the zone's size bound), against nginx's
// numbers for the same sequences.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include <string>
#include <thread>
#include <vector>

#include "modules/limit_conn/conn_table.h"
#include "modules/limit_req/leaky_bucket.h"
#include "modules/limit_req/req_table.h"

namespace torii::limits {
namespace {

constexpr uint64_t kRate10 = 10'000;  // 10r/s in milli-requests

TEST(LeakyBucket, ExcessGrowsByOneRequestAndLeaksAtTheRate) {
  EXPECT_EQ(excess_after(0, kRate10, 0), 1000);
  EXPECT_EQ(excess_after(1000, kRate10, 0), 2000);
  EXPECT_EQ(excess_after(2000, kRate10, 100), 2000);  // 100 ms leaks one request at 10r/s
  EXPECT_EQ(excess_after(2000, kRate10, 10000), 0);  // drained long ago: clamped after the request is added
  EXPECT_EQ(excess_after(0, kRate10, 5000), 0);  // never below zero... then one request added
}

TEST(LeakyBucket, RatePerMinute) {
  const uint64_t rate = 30 * 1000 / 60;  // 30r/m = 500 milli-requests a second
  EXPECT_EQ(excess_after(1000, rate, 1000), 1500);
  EXPECT_EQ(excess_after(1000, rate, 2000), 1000);
}

TEST(LeakyBucket, ClockGoingBackIsClamped) {
  EXPECT_EQ(elapsed_ms(100, 200), 0);
  EXPECT_EQ(elapsed_ms(0, 70'000), 1);  // more than a minute behind
  EXPECT_EQ(elapsed_ms(300, 200), 100);
}

TEST(LeakyBucket, DelayIsTheExcessAboveDelayDrainingAtTheRate) {
  EXPECT_EQ(delay_ms(1000, 0, kRate10), 100u);
  EXPECT_EQ(delay_ms(3000, 0, kRate10), 300u);
  EXPECT_EQ(delay_ms(3000, 2000, kRate10), 100u);
  EXPECT_EQ(delay_ms(2000, 2000, kRate10), 0u);
  EXPECT_EQ(delay_ms(0, 0, kRate10), 0u);
}

TEST(ReqTable, BurstOfThreeAtTenPerSecond) {
  ReqTable t("t", 64 * 1024);
  const uint64_t burst = 3000;
  int64_t now = 1'000'000;
  // nginx: the first request makes an entry at excess 0; each next one
  // adds 1000 and the bucket holds up to the burst.
  std::vector<uint64_t> excess;
  std::vector<ReqTable::Outcome> outcomes;
  for (int i = 0; i < 6; ++i) {
    auto r = t.lookup("k", kRate10, burst, true, now);
    outcomes.push_back(r.outcome);
    excess.push_back(r.excess);
  }
  EXPECT_EQ(excess, (std::vector<uint64_t>{0, 1000, 2000, 3000, 4000, 4000}));
  EXPECT_EQ(outcomes[3], ReqTable::Outcome::passed);
  EXPECT_EQ(outcomes[4], ReqTable::Outcome::busy);
  EXPECT_EQ(outcomes[5], ReqTable::Outcome::busy);
  // 100 ms later one request's worth has leaked.
  auto r = t.lookup("k", kRate10, burst, true, now + 100);
  EXPECT_EQ(r.outcome, ReqTable::Outcome::passed);
  EXPECT_EQ(r.excess, 3000u);
  // Another key has its own bucket.
  EXPECT_EQ(t.lookup("other", kRate10, burst, true, now).excess, 0u);
  EXPECT_EQ(t.entries(), 2u);
}

TEST(ReqTable, HeldEntryIsAccountedLater) {
  ReqTable t("t", 64 * 1024);
  auto r = t.lookup("k", kRate10, 0, false, 5000);
  ASSERT_EQ(r.outcome, ReqTable::Outcome::held);
  // A new held entry counts from time 0, as nginx's: it has long drained.
  EXPECT_EQ(t.account(r.hold, kRate10, 5000), 0u);
  auto again = t.lookup("k", kRate10, 0, true, 5000);
  EXPECT_EQ(again.outcome, ReqTable::Outcome::busy);  // 1000 > burst 0
}

TEST(ReqTable, SizeBoundsEntriesAndTheOldestGoes) {
  const size_t size = 32 * 1024;  // the smallest zone: one shard
  ReqTable t("t", size);
  const size_t capacity = size / ReqTable::entry_cost(4);
  for (size_t i = 0; i < capacity + 100; ++i) {
    std::string key(4, '\0');
    memcpy(key.data(), &i, 4);
    auto r = t.lookup(key, kRate10, 0, true, 1000);
    ASSERT_EQ(r.outcome, ReqTable::Outcome::passed) << i;
  }
  EXPECT_EQ(t.entries(), capacity);
  // The first keys were evicted: the zero key starts afresh (excess 0).
  std::string first(4, '\0');
  EXPECT_EQ(t.lookup(first, kRate10, 0, true, 1000).excess, 0u);
}

TEST(ReqTable, FullOfHeldEntriesCannotAllocate) {
  ReqTable t("t", 32 * 1024);
  const size_t capacity = 32 * 1024 / ReqTable::entry_cost(4);
  for (size_t i = 0; i < capacity; ++i) {
    std::string key(4, '\0');
    memcpy(key.data(), &i, 4);
    ASSERT_EQ(t.lookup(key, kRate10, 0, false, 1000).outcome, ReqTable::Outcome::held);
  }
  EXPECT_EQ(t.lookup("new!", kRate10, 0, true, 1000).outcome, ReqTable::Outcome::no_memory);
}

TEST(ReqTable, ManyThreadsShareOneBucket) {
  ReqTable t("t", 1 << 20);
  std::vector<std::thread> threads;
  std::atomic<int> passed{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int n = 0; n < 1000; ++n)
        if (t.lookup("same", 1000, 10'000, true, 42).outcome == ReqTable::Outcome::passed) ++passed;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(passed.load(), 11);  // excess 0..10000 at one instant: 11 requests fit in burst=10
}

TEST(ReqTable, AcquireKeepsTheTableAcrossConfigs) {
  auto a = ReqTable::acquire("zone-a", 1 << 20);
  auto b = ReqTable::acquire("zone-a", 1 << 20);
  auto c = ReqTable::acquire("zone-a", 2 << 20);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(ConnTable, CountsUpToTheLimitAndGivesBack) {
  ConnTable t("c", 64 * 1024);
  ConnTable::Hold h1, h2, h3;
  EXPECT_EQ(t.add("k", 2, h1), ConnTable::Outcome::counted);
  EXPECT_EQ(t.add("k", 2, h2), ConnTable::Outcome::counted);
  EXPECT_EQ(t.add("k", 2, h3), ConnTable::Outcome::over);
  t.remove(h1);
  EXPECT_EQ(t.add("k", 2, h3), ConnTable::Outcome::counted);
  t.remove(h2);
  t.remove(h3);
  EXPECT_EQ(t.entries(), 0u);
}

}  // namespace
}  // namespace torii::limits
