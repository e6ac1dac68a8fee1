#include "net/tls_replay_guard.h"

#include <gtest/gtest.h>

namespace torii::net {
namespace {

constexpr int64_t kNow = 1'000'000;

TEST(TlsReplayGuard, EachTicketOnce) {
  TlsReplayGuard guard(8);
  EXPECT_TRUE(guard.first_use("a", kNow + 300, kNow));
  EXPECT_FALSE(guard.first_use("a", kNow + 300, kNow));
  EXPECT_FALSE(guard.first_use("a", kNow + 300, kNow + 299));
  EXPECT_TRUE(guard.first_use("b", kNow + 300, kNow));
}

TEST(TlsReplayGuard, ForgetsATicketOnceItHasExpired) {
  TlsReplayGuard guard(8);
  EXPECT_TRUE(guard.first_use("a", kNow + 10, kNow));
  EXPECT_TRUE(guard.first_use("b", kNow + 20, kNow));
  EXPECT_TRUE(guard.first_use("c", kNow + 30, kNow + 15));  // "a" is gone now
  EXPECT_EQ(guard.size(), 2u);
}

TEST(TlsReplayGuard, FullOfLiveTicketsRefusesRatherThanForgets) {
  TlsReplayGuard guard(2);
  EXPECT_TRUE(guard.first_use("a", kNow + 300, kNow));
  EXPECT_TRUE(guard.first_use("b", kNow + 300, kNow));
  EXPECT_FALSE(guard.first_use("c", kNow + 300, kNow));
  EXPECT_FALSE(guard.first_use("a", kNow + 300, kNow));  // still remembered
  EXPECT_TRUE(guard.first_use("c", kNow + 600, kNow + 300));  // a and b expired
}

}  // namespace
}  // namespace torii::net
