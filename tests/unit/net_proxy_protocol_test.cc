#include "net/proxy_protocol.h"

#include <gtest/gtest.h>

#include <string>

namespace torii::net {
namespace {

using Kind = ProxyProtocolResult::Kind;

std::string v2(uint8_t ver_cmd, uint8_t fam, const std::string& payload) {
  std::string h("\r\n\r\n\0\r\nQUIT\n", 12);
  h += static_cast<char>(ver_cmd);
  h += static_cast<char>(fam);
  h += static_cast<char>(payload.size() >> 8);
  h += static_cast<char>(payload.size() & 0xff);
  return h + payload;
}

TEST(ProxyProtocol, V1Tcp4) {
  std::string in = "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET / HTTP/1.1\r\n";
  auto r = parse_proxy_protocol(in);
  ASSERT_EQ(r.kind, Kind::done);
  EXPECT_EQ(r.size, in.find("GET"));
  ASSERT_TRUE(r.addrs);
  EXPECT_EQ(r.addrs->src_addr, "192.0.2.1");
  EXPECT_EQ(r.addrs->dst_addr, "198.51.100.2");
  EXPECT_EQ(r.addrs->src_port, 56324);
  EXPECT_EQ(r.addrs->dst_port, 443);
}

TEST(ProxyProtocol, V1Tcp6AndUnknown) {
  auto r = parse_proxy_protocol("PROXY TCP6 2001:db8::1 ::1 1 65535\r\n");
  ASSERT_EQ(r.kind, Kind::done);
  EXPECT_EQ(r.addrs->src_addr, "2001:db8::1");
  EXPECT_EQ(r.addrs->dst_port, 65535);
  std::string unknown = "PROXY UNKNOWN ffff:f...f ffff:f...f 65535 65535\r\nX";
  auto u = parse_proxy_protocol(unknown);
  ASSERT_EQ(u.kind, Kind::done);
  EXPECT_FALSE(u.addrs);
  EXPECT_EQ(u.size, unknown.size() - 1);
}

TEST(ProxyProtocol, V1IncompleteWaits) {
  EXPECT_EQ(parse_proxy_protocol("").kind, Kind::need_more);
  EXPECT_EQ(parse_proxy_protocol("PRO").kind, Kind::need_more);
  EXPECT_EQ(parse_proxy_protocol("PROXY TCP4 1.2.3.4 ").kind, Kind::need_more);
}

TEST(ProxyProtocol, V1Broken) {
  auto r = parse_proxy_protocol("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(r.kind, Kind::error);
  EXPECT_EQ(r.error, "broken header: \"GET / HTTP/1.1\"");
  for (const char* bad : {"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 70000\r\n",
                          "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", "PROXY TCP4 1.2.3.z 5.6.7.8 1 2\r\n",
                          "PROXY TCP3 1.2.3.4 5.6.7.8 1 2\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8  2\r\n"}) {
    EXPECT_EQ(parse_proxy_protocol(bad).kind, Kind::error) << bad;
  }
  // No line end within nginx's 107 bytes.
  EXPECT_EQ(parse_proxy_protocol("PROXY TCP4 " + std::string(120, '1')).kind, Kind::error);
}

TEST(ProxyProtocol, V2Tcp4WithTlvs) {
  std::string p = std::string("\xc0\x00\x02\x01\xc0\x00\x02\x02\x1f\x90\x01\xbb", 12) + std::string("\x01\x00\x02h2", 5);
  std::string in = v2(0x21, 0x11, p) + "GET";
  auto r = parse_proxy_protocol(in);
  ASSERT_EQ(r.kind, Kind::done);
  EXPECT_EQ(r.size, in.size() - 3);
  EXPECT_EQ(r.addrs->src_addr, "192.0.2.1");
  EXPECT_EQ(r.addrs->dst_addr, "192.0.2.2");
  EXPECT_EQ(r.addrs->src_port, 8080);
  EXPECT_EQ(r.addrs->dst_port, 443);
  EXPECT_EQ(parse_proxy_protocol(in.substr(0, 20)).kind, Kind::need_more);
}

TEST(ProxyProtocol, V2LocalUnspecAndErrors) {
  auto local = parse_proxy_protocol(v2(0x20, 0x00, ""));
  ASSERT_EQ(local.kind, Kind::done);
  EXPECT_FALSE(local.addrs);
  auto udp = parse_proxy_protocol(v2(0x21, 0x12, std::string(12, '\0')));
  ASSERT_EQ(udp.kind, Kind::done);
  EXPECT_FALSE(udp.addrs);
  auto version = parse_proxy_protocol(v2(0x11, 0x11, std::string(12, '\0')));
  ASSERT_EQ(version.kind, Kind::error);
  EXPECT_EQ(version.error, "unknown PROXY protocol version: 1");
  EXPECT_EQ(parse_proxy_protocol(v2(0x21, 0x11, std::string(8, '\0'))).kind, Kind::error);   // short IPv4
  EXPECT_EQ(parse_proxy_protocol(v2(0x21, 0x21, std::string(20, '\0'))).kind, Kind::error);  // short IPv6
  std::string huge = v2(0x21, 0x11, "").substr(0, 14) + "\xff\xff";
  auto too_large = parse_proxy_protocol(huge);
  ASSERT_EQ(too_large.kind, Kind::error);
  EXPECT_EQ(too_large.error, "header is too large");
}

}  // namespace
}  // namespace torii::net
