#include "net/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace torii::net {

std::string address_text(const sockaddr_storage& addr) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr, buf, sizeof buf);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a6 = reinterpret_cast<const sockaddr_in6&>(addr);
    // Show v4-mapped peers on a dual-stack socket as plain IPv4, like nginx.
    if (IN6_IS_ADDR_V4MAPPED(&a6.sin6_addr)) {
      inet_ntop(AF_INET, &a6.sin6_addr.s6_addr[12], buf, sizeof buf);
    } else {
      inet_ntop(AF_INET6, &a6.sin6_addr, buf, sizeof buf);
    }
  } else if (addr.ss_family == AF_UNIX) {
    return "unix:";
  }
  return buf;
}

uint16_t address_port(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  return 0;
}

std::string address_with_port(const sockaddr_storage& addr) {
  std::string host = address_text(addr);
  std::string port = std::to_string(address_port(addr));
  if (addr.ss_family == AF_INET6) return "[" + host + "]:" + port;
  return host + ":" + port;
}

}  // namespace torii::net
