#include "stream/pass_target.h"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <memory>

#include "net/address.h"

namespace torii::stream {
namespace {

std::shared_ptr<const Upstream> named_group(const std::string& name) {
  auto g = std::make_shared<config::UpstreamGroupConfig>();
  g->name = name;
  auto u = std::make_shared<Upstream>();
  u->group = std::move(g);
  return u;
}

TEST(StreamPassTarget, LiteralAddresses) {
  sockaddr_storage a{};
  ASSERT_TRUE(literal_address("127.0.0.1:53", a));
  EXPECT_EQ(a.ss_family, AF_INET);
  EXPECT_EQ(net::address_port(a), 53);
  ASSERT_TRUE(literal_address("[::1]:8080", a));
  EXPECT_EQ(a.ss_family, AF_INET6);
  EXPECT_EQ(net::address_port(a), 8080);
  EXPECT_FALSE(literal_address("127.0.0.1", a));
  EXPECT_FALSE(literal_address("127.0.0.1:0", a));
  EXPECT_FALSE(literal_address("127.0.0.1:65536", a));
  EXPECT_FALSE(literal_address("[::1]8080", a));
  EXPECT_FALSE(literal_address("example.test:53", a));
}

TEST(StreamPassTarget, UpstreamNameWithoutCaseThenAddressThenHost) {
  StreamConfig cfg;
  cfg.upstreams.push_back(named_group("Backends"));
  PassTarget t = find_pass_target(cfg, "backends");
  ASSERT_TRUE(t.upstream);
  EXPECT_EQ(t.upstream->group->name, "Backends");

  t = find_pass_target(cfg, "192.0.2.1:53");
  ASSERT_TRUE(t.upstream);
  EXPECT_TRUE(t.upstream->per_session);
  ASSERT_EQ(t.upstream->group->servers.size(), 1u);
  EXPECT_EQ(t.upstream->group->servers[0].name, "192.0.2.1:53");

  t = find_pass_target(cfg, "dns.example.test:5353");
  EXPECT_FALSE(t.upstream);
  EXPECT_EQ(t.host, "dns.example.test");
  EXPECT_EQ(t.port, 5353);

  t = find_pass_target(cfg, "dns.example.test");
  EXPECT_FALSE(t.upstream);
  EXPECT_TRUE(t.host.empty());
  EXPECT_EQ(t.error, "no port in upstream \"dns.example.test\"");
}

}  // namespace
}  // namespace torii::stream
