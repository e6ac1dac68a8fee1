#include "net/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>

namespace torii::net {

namespace {

// Dotted quad without inet_ntop, which formats it through sprintf: this
// runs twice for every accepted connection.
void format_ipv4(const void* addr, char* out) {
  const auto* b = static_cast<const unsigned char*>(addr);
  for (int i = 0; i < 4; ++i) {
    if (i > 0) *out++ = '.';
    unsigned v = b[i];
    if (v >= 100) *out++ = char('0' + v / 100);
    if (v >= 10) *out++ = char('0' + v / 10 % 10);
    *out++ = char('0' + v % 10);
  }
  *out = '\0';
}

}  // namespace

std::string address_text(const sockaddr_storage& addr) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    format_ipv4(&reinterpret_cast<const sockaddr_in&>(addr).sin_addr, buf);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a6 = reinterpret_cast<const sockaddr_in6&>(addr);
    // Show v4-mapped peers on a dual-stack socket as plain IPv4, like nginx.
    if (IN6_IS_ADDR_V4MAPPED(&a6.sin6_addr)) {
      format_ipv4(&a6.sin6_addr.s6_addr[12], buf);
    } else {
      inet_ntop(AF_INET6, &a6.sin6_addr, buf, sizeof buf);
    }
  } else if (addr.ss_family == AF_UNIX) {
    // nginx's form: "unix:PATH", "unix:" for a client's unnamed socket.
    const auto& un = reinterpret_cast<const sockaddr_un&>(addr);
    return "unix:" + std::string(un.sun_path, strnlen(un.sun_path, sizeof un.sun_path));
  }
  return buf;
}

uint16_t address_port(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  return 0;
}

std::string address_with_port(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_UNIX) return address_text(addr);  // a socket has no port
  std::string host = address_text(addr);
  std::string port = std::to_string(address_port(addr));
  if (addr.ss_family == AF_INET6) return "[" + host + "]:" + port;
  return host + ":" + port;
}

bool unix_address(std::string_view path, sockaddr_storage& addr, socklen_t& len) {
  sockaddr_un un{};
  if (path.empty() || path.size() >= sizeof un.sun_path) return false;
  un.sun_family = AF_UNIX;
  std::memcpy(un.sun_path, path.data(), path.size());
  addr = {};
  std::memcpy(&addr, &un, sizeof un);
  len = socklen_t(offsetof(sockaddr_un, sun_path) + path.size() + 1);
  return true;
}

}  // namespace torii::net
