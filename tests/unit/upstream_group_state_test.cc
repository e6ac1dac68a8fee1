#include "upstream/group_state.h"

#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <map>
#include <string>

namespace torii::upstream {
namespace {

using Balancer = config::UpstreamGroupConfig::Balancer;

config::UpstreamGroupConfig group(std::initializer_list<unsigned> weights, Balancer b = Balancer::round_robin) {
  config::UpstreamGroupConfig g;
  g.balancer = b;
  int i = 0;
  for (unsigned w : weights) {
    config::UpstreamServer s;
    s.name = "s" + std::to_string(i++);
    s.weight = w;
    g.servers.push_back(s);
  }
  return g;
}

std::vector<uint8_t> none(const GroupState& st) { return std::vector<uint8_t>(st.size(), 0); }

TEST(GroupState, SmoothWeightedRoundRobin) {
  auto cfg = group({5, 1, 1});
  GroupState st(cfg);
  std::string seq;
  for (int i = 0; i < 7; ++i) seq += char('a' + st.pick({}, none(st), 0));
  // nginx's smooth sequence for 5:1:1 spreads the heavy server out.
  EXPECT_EQ(seq, "aabacaa");
}

TEST(GroupState, SkipsTriedAndFailed) {
  auto cfg = group({1, 1});
  cfg.servers[0].max_fails = 2;
  cfg.servers[0].fail_timeout = config::Ms(1000);
  GroupState st(cfg);
  std::vector<uint8_t> tried = {1, 0};
  EXPECT_EQ(st.pick({}, tried, 0), 1);
  st.failed(0, 100);
  EXPECT_TRUE(st.available(0, 100));  // one failure of two allowed
  st.failed(0, 200);
  EXPECT_FALSE(st.available(0, 300));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(st.pick({}, none(st), 300), 1);
  EXPECT_TRUE(st.available(0, 1200));  // fail_timeout passed: tried again
  st.succeeded(0);
  EXPECT_EQ(st.fails(0), 0u);
  tried = {1, 1};
  EXPECT_EQ(st.pick({}, tried, 1200), -1);
}

TEST(GroupState, SingleServerIsNeverMarkedDown) {
  auto cfg = group({1});
  GroupState st(cfg);
  for (int i = 0; i < 5; ++i) st.failed(0, 10);
  EXPECT_EQ(st.pick({}, none(st), 10), 0);
}

TEST(GroupState, BackupOnlyWhenPrimariesAreDown) {
  auto cfg = group({1, 1});
  cfg.servers[1].backup = true;
  cfg.servers[0].down = true;
  GroupState st(cfg);
  EXPECT_EQ(st.pick({}, none(st), 0), 1);
  cfg.servers[0].down = false;
  GroupState st2(cfg);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(st2.pick({}, none(st2), 0), 0);
}

TEST(GroupState, LeastConnAndMaxConns) {
  auto cfg = group({1, 1, 1}, Balancer::least_conn);
  cfg.servers[2].max_conns = 1;
  GroupState st(cfg);
  st.acquire(0);
  st.acquire(0);
  st.acquire(1);
  EXPECT_EQ(st.pick({}, none(st), 0), 2);
  st.acquire(2);  // at max_conns now
  EXPECT_EQ(st.pick({}, none(st), 0), 1);
}

TEST(GroupState, IpHashSticksPerSlash24) {
  auto cfg = group({1, 1, 1}, Balancer::ip_hash);
  GroupState st(cfg);
  auto addr = [](const char* ip) {
    sockaddr_storage ss{};
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    sin->sin_family = AF_INET;
    inet_pton(AF_INET, ip, &sin->sin_addr);
    return ss;
  };
  auto a = addr("10.1.2.3");
  auto b = addr("10.1.2.200");
  PickInput in;
  in.client = &a;
  int first = st.pick(in, none(st), 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(st.pick(in, none(st), 0), first);
  in.client = &b;
  EXPECT_EQ(st.pick(in, none(st), 0), first);
  std::map<int, int> spread;
  for (int i = 0; i < 60; ++i) {
    auto c = addr(("10." + std::to_string(i) + ".7.1").c_str());
    in.client = &c;
    ++spread[st.pick(in, none(st), 0)];
  }
  EXPECT_EQ(spread.size(), 3u);
}

TEST(GroupState, HashAndConsistentHash) {
  for (bool consistent : {false, true}) {
    auto cfg = group({1, 1, 1, 1}, Balancer::hash);
    cfg.consistent = consistent;
    GroupState st(cfg);
    std::map<int, int> spread;
    for (int i = 0; i < 200; ++i) {
      PickInput in;
      std::string key = "/user/" + std::to_string(i);
      in.hash_key = key;
      int p = st.pick(in, none(st), 0);
      EXPECT_EQ(st.pick(in, none(st), 0), p);
      ++spread[p];
    }
    EXPECT_EQ(spread.size(), 4u) << consistent;
    for (auto [peer, n] : spread) EXPECT_GT(n, 15) << consistent << " peer " << peer;
  }
}

TEST(GroupState, ConsistentHashMovesFewKeysWhenAServerGoesDown) {
  auto cfg = group({1, 1, 1, 1}, Balancer::hash);
  cfg.consistent = true;
  GroupState st(cfg);
  std::vector<int> before;
  for (int i = 0; i < 400; ++i) {
    PickInput in;
    std::string key = "k" + std::to_string(i);
    in.hash_key = key;
    before.push_back(st.pick(in, none(st), 0));
  }
  std::vector<uint8_t> tried = {0, 0, 1, 0};  // server 2 unusable
  int moved = 0;
  for (int i = 0; i < 400; ++i) {
    PickInput in;
    std::string key = "k" + std::to_string(i);
    in.hash_key = key;
    int p = st.pick(in, tried, 0);
    EXPECT_NE(p, 2);
    if (before[size_t(i)] != 2 && p != before[size_t(i)]) ++moved;
  }
  EXPECT_EQ(moved, 0);  // only the keys of the missing server move
}

TEST(GroupState, RandomTwoPrefersLessLoaded) {
  auto cfg = group({1, 1}, Balancer::random);
  cfg.random_two = true;
  GroupState st(cfg);
  for (int i = 0; i < 5; ++i) st.acquire(0);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(st.pick({}, none(st), 0), 1);
}

TEST(Crc32, KnownValue) { EXPECT_EQ(crc32("123456789"), 0xcbf43926u); }

}  // namespace
}  // namespace torii::upstream
