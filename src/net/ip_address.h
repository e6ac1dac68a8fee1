// IP addresses and networks as values: parsed from the text that headers
// (X-Forwarded-For, X-Real-IP), PROXY headers and directives carry, and
// matched against CIDR networks. Shared by realip and geo.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace torii::net {

struct IpAddress {
  int family = 0;  // AF_INET, AF_INET6; 0: none (or a unix socket peer)
  uint8_t bytes[16] = {};
  uint16_t port = 0;  // 0: none given
  size_t size() const { return family == AF_INET ? 4 : 16; }
};

// "192.0.2.1" or "2001:db8::1", nothing else (nginx's ngx_parse_addr).
bool parse_ip(std::string_view text, IpAddress& out);
// Also with a port: "192.0.2.1:80", "[2001:db8::1]:80", "[2001:db8::1]"
// (nginx's ngx_parse_addr_port; a port must be 1..65535).
bool parse_ip_port(std::string_view text, IpAddress& out);
// A socket address; an IPv4-mapped IPv6 peer becomes IPv4, as in logs.
IpAddress ip_of(const sockaddr_storage& sa);
sockaddr_storage to_sockaddr(const IpAddress& ip);
// inet_ntop's form, without port.
std::string ip_text(const IpAddress& ip);

struct Cidr {
  int family = 0;  // AF_INET, AF_INET6, or AF_UNIX for "unix:"
  uint8_t addr[16] = {};
  uint8_t mask[16] = {};
  int bits = 0;
};

enum class CidrParse : uint8_t { ok, low_bits_set, invalid };
// "192.0.2.0/24", "2001:db8::/32", a bare address (all bits), "unix:".
// With bits set below the mask nginx warns ("low address bits of ... are
// meaningless") and clears them: low_bits_set, `out` cleared.
CidrParse parse_cidr(std::string_view text, Cidr& out);
bool cidr_match(const Cidr& net, const IpAddress& ip);

}  // namespace torii::net
