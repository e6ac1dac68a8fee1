#include "net/proxy_protocol.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

#include "net/address.h"

namespace torii::net {

namespace {

using Kind = ProxyProtocolResult::Kind;

constexpr std::string_view kV2Signature("\r\n\r\n\0\r\nQUIT\n", 12);
constexpr size_t kV2HeaderLen = 16;  // signature, version/command, family/transport, length

ProxyProtocolResult fail(std::string message) {
  ProxyProtocolResult r;
  r.kind = Kind::error;
  r.error = std::move(message);
  return r;
}

ProxyProtocolResult broken(std::string_view in) { return fail(proxy_protocol_broken_header(in)); }

// An address field of v1: hex digits, '.' and ':' up to a space (nginx
// checks no more than that; the realip module parses it later).
bool read_addr(std::string_view& s, std::string& out) {
  size_t i = 0;
  for (; i < s.size() && s[i] != ' '; ++i) {
    char c = s[i];
    bool ok = c == ':' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!ok) return false;
  }
  if (i == s.size()) return false;
  out.assign(s.substr(0, i));
  s.remove_prefix(i + 1);
  return true;
}

bool read_port(std::string_view& s, char sep, uint16_t& out) {
  size_t end = s.find(sep);
  if (end == std::string_view::npos || end == 0 || end > 5) return false;
  uint32_t v = 0;
  for (char c : s.substr(0, end)) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  if (v > 65535) return false;
  out = static_cast<uint16_t>(v);
  s.remove_prefix(end + 1);
  return true;
}

ProxyProtocolResult parse_v1(std::string_view in) {
  constexpr std::string_view kPrefix = "PROXY ";
  size_t n = std::min(in.size(), kPrefix.size());
  if (in.substr(0, n) != kPrefix.substr(0, n)) return broken(in);
  size_t lf = in.find('\n');
  if (lf == std::string_view::npos) {
    // A line still arriving; past the longest v1 header it cannot end well.
    if (in.size() >= kProxyProtocolV1MaxHeader) return broken(in);
    return {};
  }
  if (lf + 1 > kProxyProtocolV1MaxHeader) return broken(in);
  std::string_view line = in.substr(0, lf + 1);
  std::string_view s = line.substr(kPrefix.size());
  ProxyProtocolResult r;
  r.kind = Kind::done;
  r.size = line.size();
  if (s.starts_with("UNKNOWN")) {
    // The balancer does not know the addresses: the rest of the line is skipped.
    if (line.size() < 2 || line[line.size() - 2] != '\r') return broken(in);
    return r;
  }
  if (s.size() < 5 || !s.starts_with("TCP") || (s[3] != '4' && s[3] != '6') || s[4] != ' ') return broken(in);
  s.remove_prefix(5);
  ProxyProtocolAddrs a;
  if (!read_addr(s, a.src_addr) || !read_addr(s, a.dst_addr) || !read_port(s, ' ', a.src_port) ||
      !read_port(s, '\r', a.dst_port) || s != "\n")
    return broken(in);
  r.addrs = std::move(a);
  return r;
}

uint16_t be16(const unsigned char* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

std::string ip_text(int family, const unsigned char* bytes) {
  char buf[INET6_ADDRSTRLEN];
  if (!inet_ntop(family, bytes, buf, sizeof buf)) return {};
  return buf;
}

ProxyProtocolResult parse_v2(std::string_view in) {
  if (in.size() < kV2HeaderLen) return {};
  const auto* h = reinterpret_cast<const unsigned char*>(in.data());
  unsigned version = h[12] >> 4;
  if (version != 2) return fail("unknown PROXY protocol version: " + std::to_string(version));
  size_t len = be16(h + 14);
  if (kV2HeaderLen + len > kProxyProtocolMaxHeader) return fail("header is too large");
  if (in.size() < kV2HeaderLen + len) return {};
  ProxyProtocolResult r;
  r.kind = Kind::done;
  r.size = kV2HeaderLen + len;
  unsigned command = h[12] & 0x0f;
  unsigned family = h[13] >> 4;
  unsigned transport = h[13] & 0x0f;
  // LOCAL (a health check from the balancer itself), UDP, unix sockets:
  // the connection's own addresses stay, as in nginx.
  if (command == 0) return r;
  if (command != 1) return fail("unknown PROXY protocol command: " + std::to_string(command));
  if (transport != 1) return r;
  const unsigned char* p = h + kV2HeaderLen;
  ProxyProtocolAddrs a;
  if (family == 1) {  // IPv4: 4 + 4 + 2 + 2
    if (len < 12) return fail("broken PROXY protocol v2 header: IPv4 addresses too short");
    a.src_addr = ip_text(AF_INET, p);
    a.dst_addr = ip_text(AF_INET, p + 4);
    a.src_port = be16(p + 8);
    a.dst_port = be16(p + 10);
  } else if (family == 2) {  // IPv6: 16 + 16 + 2 + 2
    if (len < 36) return fail("broken PROXY protocol v2 header: IPv6 addresses too short");
    a.src_addr = ip_text(AF_INET6, p);
    a.dst_addr = ip_text(AF_INET6, p + 16);
    a.src_port = be16(p + 32);
    a.dst_port = be16(p + 34);
  } else {
    return r;
  }
  r.addrs = std::move(a);
  return r;
}

}  // namespace

ProxyProtocolResult parse_proxy_protocol(std::string_view in) {
  size_t n = std::min(in.size(), kV2Signature.size());
  if (n > 0 && in.substr(0, n) == kV2Signature.substr(0, n)) return parse_v2(in);
  return parse_v1(in);
}

}  // namespace torii::net

namespace torii::net {

std::string proxy_protocol_broken_header(std::string_view in) {
  size_t end = in.find_first_of("\r\n");
  if (end == std::string_view::npos) end = in.size();
  std::string text = "broken header: \"";
  for (char c : in.substr(0, end)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {  // a binary header must not garble the log line
      static const char kHex[] = "0123456789ABCDEF";
      text += "\\x";
      text += kHex[u >> 4];
      text += kHex[u & 15];
    } else {
      text += c;
    }
  }
  text += '"';
  return text;
}

std::string proxy_protocol_v1_header(const sockaddr_storage& peer, const sockaddr_storage& local) {
  // A client on a unix socket has no address the protocol can carry.
  if (peer.ss_family != AF_INET && peer.ss_family != AF_INET6) return "PROXY UNKNOWN\r\n";
  const bool v6 = peer.ss_family == AF_INET6;
  return std::string("PROXY ") + (v6 ? "TCP6 " : "TCP4 ") + address_text(peer) + " " + address_text(local) + " " +
         std::to_string(address_port(peer)) + " " + std::to_string(address_port(local)) + "\r\n";
}

}  // namespace torii::net
