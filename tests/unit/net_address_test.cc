#include "net/address.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>

namespace torii::net {
namespace {

sockaddr_storage v4(const char* text, uint16_t port) {
  sockaddr_storage ss{};
  auto& a = reinterpret_cast<sockaddr_in&>(ss);
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET, text, &a.sin_addr), 1);
  return ss;
}

sockaddr_storage v6(const char* text, uint16_t port) {
  sockaddr_storage ss{};
  auto& a = reinterpret_cast<sockaddr_in6&>(ss);
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
  return ss;
}

TEST(AddressText, Ipv4EveryDigitCount) {
  for (const char* text : {"0.0.0.0", "127.0.0.1", "10.20.30.40", "100.200.255.9", "255.255.255.255", "1.10.100.0"}) {
    EXPECT_EQ(address_text(v4(text, 80)), text);
  }
}

TEST(AddressText, Ipv6AndMappedIpv4) {
  EXPECT_EQ(address_text(v6("::1", 80)), "::1");
  EXPECT_EQ(address_text(v6("2001:db8::7", 80)), "2001:db8::7");
  EXPECT_EQ(address_text(v6("::ffff:192.168.1.20", 80)), "192.168.1.20");  // as nginx shows it
}

TEST(AddressText, WithPort) {
  EXPECT_EQ(address_with_port(v4("127.0.0.1", 8080)), "127.0.0.1:8080");
  EXPECT_EQ(address_with_port(v6("::1", 443)), "[::1]:443");
}

}  // namespace
}  // namespace torii::net
