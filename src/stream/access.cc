#include "stream/access.h"

#include <netinet/in.h>

#include <cstdint>
#include <cstring>

namespace torii::stream {

namespace {

bool address_matches(const config::AccessRule& r, const sockaddr_storage& peer) {
  if (r.all) return true;
  const uint8_t* a = nullptr;
  size_t len = 0;
  uint8_t mapped[4];
  if (peer.ss_family == AF_INET) {
    a = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in&>(peer).sin_addr);
    len = 4;
  } else if (peer.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    a = reinterpret_cast<const uint8_t*>(&in6);
    len = 16;
    // An IPv4 client on a dual-stack socket meets the IPv4 rules, as nginx.
    if (IN6_IS_ADDR_V4MAPPED(&in6) && r.family == AF_INET) {
      std::memcpy(mapped, a + 12, 4);
      a = mapped;
      len = 4;
    }
  }
  if (!a || (len == 4) != (r.family == AF_INET)) return false;
  for (size_t i = 0; i < len; ++i)
    if ((a[i] & r.mask[i]) != r.addr[i]) return false;
  return true;
}

}  // namespace

bool access_allowed(const std::vector<config::AccessRule>& rules, const sockaddr_storage& peer) {
  for (const auto& r : rules)
    if (address_matches(r, peer)) return r.allow;
  return true;
}

}  // namespace torii::stream
