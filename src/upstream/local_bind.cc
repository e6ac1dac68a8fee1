#include "upstream/local_bind.h"

#include <netinet/in.h>

#include <cerrno>

namespace torii::upstream {

namespace {

bool set_transparent(int fd, int family, BindFailure& failure) {
  const int one = 1;
  if (family == AF_INET6) {
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_TRANSPARENT, &one, sizeof one) == 0) return true;
    failure = {config::LogLevel::alert, errno, "setsockopt(IPV6_TRANSPARENT) failed"};
    return false;
  }
  if (setsockopt(fd, IPPROTO_IP, IP_TRANSPARENT, &one, sizeof one) == 0) return true;
  failure = {config::LogLevel::alert, errno, "setsockopt(IP_TRANSPARENT) failed"};
  return false;
}

uint16_t port_of(const sockaddr_storage& sa) {
  if (sa.ss_family == AF_INET) return reinterpret_cast<const sockaddr_in&>(sa).sin_port;
  if (sa.ss_family == AF_INET6) return reinterpret_cast<const sockaddr_in6&>(sa).sin6_port;
  return 0;
}

}  // namespace

bool bind_local(int fd, const sockaddr_storage& local, socklen_t len, bool transparent, std::string_view name,
                BindFailure& failure) {
  if (transparent && !set_transparent(fd, local.ss_family, failure)) return false;
  if (port_of(local) == 0) {
    // Only an optimisation: a kernel without it binds a port at once.
    const int one = 1;
    (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
  }
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&local), len) == 0) return true;
  failure = {config::LogLevel::crit, errno, "bind(" + std::string(name) + ") failed"};
  return false;
}

}  // namespace torii::upstream
