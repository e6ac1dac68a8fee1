#include "net/ip_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace torii::net {

bool parse_ip(std::string_view text, IpAddress& out) {
  char buf[INET6_ADDRSTRLEN + 1];
  if (text.empty() || text.size() >= sizeof buf) return false;
  memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  IpAddress ip;
  if (inet_pton(AF_INET, buf, ip.bytes) == 1) {
    ip.family = AF_INET;
  } else if (inet_pton(AF_INET6, buf, ip.bytes) == 1) {
    ip.family = AF_INET6;
  } else {
    return false;
  }
  out = ip;
  return true;
}

namespace {
bool parse_port(std::string_view s, uint16_t& port) {
  if (s.empty() || s.size() > 5) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  if (v < 1 || v > 65535) return false;
  port = static_cast<uint16_t>(v);
  return true;
}
}  // namespace

bool parse_ip_port(std::string_view text, IpAddress& out) {
  if (parse_ip(text, out)) return true;
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return false;
    if (close == text.size() - 1) return parse_ip(text.substr(1, close - 1), out);
    if (text[close + 1] != ':') return false;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.find(':');
    if (colon == std::string_view::npos) return false;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  IpAddress ip;
  if (!parse_ip(host, ip) || !parse_port(port, ip.port)) return false;
  out = ip;
  return true;
}

IpAddress ip_of(const sockaddr_storage& sa) {
  IpAddress ip;
  if (sa.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(sa);
    ip.family = AF_INET;
    memcpy(ip.bytes, &a.sin_addr, 4);
    ip.port = ntohs(a.sin_port);
  } else if (sa.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(sa);
    if (IN6_IS_ADDR_V4MAPPED(&a.sin6_addr)) {
      ip.family = AF_INET;
      memcpy(ip.bytes, &a.sin6_addr.s6_addr[12], 4);
    } else {
      ip.family = AF_INET6;
      memcpy(ip.bytes, &a.sin6_addr, 16);
    }
    ip.port = ntohs(a.sin6_port);
  }
  return ip;
}

sockaddr_storage to_sockaddr(const IpAddress& ip) {
  sockaddr_storage ss{};
  if (ip.family == AF_INET) {
    auto& a = reinterpret_cast<sockaddr_in&>(ss);
    a.sin_family = AF_INET;
    memcpy(&a.sin_addr, ip.bytes, 4);
    a.sin_port = htons(ip.port);
  } else if (ip.family == AF_INET6) {
    auto& a = reinterpret_cast<sockaddr_in6&>(ss);
    a.sin6_family = AF_INET6;
    memcpy(&a.sin6_addr, ip.bytes, 16);
    a.sin6_port = htons(ip.port);
  }
  return ss;
}

std::string ip_text(const IpAddress& ip) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (ip.family == AF_INET || ip.family == AF_INET6) inet_ntop(ip.family, ip.bytes, buf, sizeof buf);
  return buf;
}

CidrParse parse_cidr(std::string_view text, Cidr& out) {
  Cidr c;
  if (text == "unix:") {
    c.family = AF_UNIX;
    out = c;
    return CidrParse::ok;
  }
  std::string_view addr = text;
  int bits = -1;
  size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    std::string_view b = text.substr(slash + 1);
    if (b.empty() || b.size() > 3) return CidrParse::invalid;
    bits = 0;
    for (char ch : b) {
      if (ch < '0' || ch > '9') return CidrParse::invalid;
      bits = bits * 10 + (ch - '0');
    }
    addr = text.substr(0, slash);
  }
  IpAddress ip;
  if (!parse_ip(addr, ip)) return CidrParse::invalid;
  const int max = static_cast<int>(ip.size() * 8);
  if (bits < 0) bits = max;
  if (bits > max) return CidrParse::invalid;
  c.family = ip.family;
  c.bits = bits;
  bool low = false;
  for (size_t i = 0; i < ip.size(); ++i) {
    int b = std::min(8, std::max(0, bits - static_cast<int>(i * 8)));
    c.mask[i] = static_cast<uint8_t>(b == 0 ? 0 : 0xff << (8 - b));
    if (ip.bytes[i] & ~c.mask[i]) low = true;
    c.addr[i] = ip.bytes[i] & c.mask[i];
  }
  out = c;
  return low ? CidrParse::low_bits_set : CidrParse::ok;
}

bool cidr_match(const Cidr& net, const IpAddress& ip) {
  if (net.family != ip.family || ip.family == 0) return false;
  for (size_t i = 0; i < ip.size(); ++i)
    if ((ip.bytes[i] & net.mask[i]) != net.addr[i]) return false;
  return true;
}

}  // namespace torii::net
