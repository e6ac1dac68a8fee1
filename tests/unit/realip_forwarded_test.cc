#include <gtest/gtest.h>

#include "modules/realip/realip.h"

namespace torii::realip {
namespace {

net::IpAddress ip(const char* s) {
  net::IpAddress a;
  EXPECT_TRUE(net::parse_ip_port(s, a)) << s;
  return a;
}

std::vector<net::Cidr> nets(std::initializer_list<const char*> list) {
  std::vector<net::Cidr> out;
  for (const char* s : list) {
    net::Cidr c;
    EXPECT_NE(net::parse_cidr(s, c), net::CidrParse::invalid) << s;
    out.push_back(c);
  }
  return out;
}

std::string walk(const char* peer, std::vector<std::string_view> values, bool recursive) {
  auto r = forwarded_address(ip(peer), values, nets({"127.0.0.0/8", "10.0.0.0/8", "2001:db8::/32"}), recursive);
  return r ? net::ip_text(*r) + (r->port ? ":" + std::to_string(r->port) : "") : "-";
}

TEST(RealIp, UntrustedPeerDeclines) { EXPECT_EQ(walk("192.0.2.1", {"203.0.113.1"}, false), "-"); }

TEST(RealIp, LastEntryWithoutRecursion) {
  EXPECT_EQ(walk("127.0.0.1", {"203.0.113.1, 10.0.0.2"}, false), "10.0.0.2");
}

TEST(RealIp, RecursionSkipsTrustedHops) {
  EXPECT_EQ(walk("127.0.0.1", {"198.51.100.1, 203.0.113.1, 10.0.0.2"}, true), "203.0.113.1");
  // All trusted: the first one.
  EXPECT_EQ(walk("127.0.0.1", {"10.0.0.3, 10.0.0.2"}, true), "10.0.0.3");
  // Several header lines form one list.
  EXPECT_EQ(walk("127.0.0.1", {"203.0.113.9", "10.0.0.2"}, true), "203.0.113.9");
}

TEST(RealIp, PortsAndIpv6) {
  EXPECT_EQ(walk("127.0.0.1", {"203.0.113.1:8080"}, false), "203.0.113.1:8080");
  EXPECT_EQ(walk("127.0.0.1", {"[2001:db8::5]:443"}, false), "2001:db8::5:443");
  EXPECT_EQ(walk("2001:db8::1", {"198.51.100.7"}, false), "198.51.100.7");
}

TEST(RealIp, GarbageStopsTheWalk) {
  EXPECT_EQ(walk("127.0.0.1", {"unknown"}, false), "-");
  EXPECT_EQ(walk("127.0.0.1", {"203.0.113.1, garbage, 10.0.0.2"}, true), "10.0.0.2");
}

}  // namespace
}  // namespace torii::realip
