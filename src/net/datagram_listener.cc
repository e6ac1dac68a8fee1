#include "net/datagram_listener.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "net/packet_info.h"

namespace torii::net {

bool is_wildcard(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr == htonl(INADDR_ANY);
  if (a.ss_family == AF_INET6) return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr);
  return false;
}

Result<int> open_datagram_listener(const config::Listen& l) {
  const int fd = ::socket(l.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("socket() failed (") + std::to_string(errno) + ": " + std::strerror(errno) + ")");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (l.addr.ss_family == AF_INET6) {
    int v6only = l.ipv6only ? 1 : 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
  }
  if (is_wildcard(l.addr)) enable_packet_info(fd, l.addr.ss_family);  // replies leave from the address asked
  if (l.rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &l.rcvbuf, sizeof l.rcvbuf);
  if (l.sndbuf > 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &l.sndbuf, sizeof l.sndbuf);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&l.addr), l.addr_len) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error("bind() to " + l.text + " (udp) failed (" + std::to_string(err) + ": " + std::strerror(err) + ")");
  }
  return fd;
}

}  // namespace torii::net
