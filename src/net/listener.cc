#include "net/listener.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace torii::net {

namespace {

Result<int> make_socket(const config::Listen& l, bool reuseport) {
  int fd = socket(l.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("socket() failed: ") + strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuseport) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (l.addr.ss_family == AF_INET6) {
    int v6only = l.ipv6only ? 1 : 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
  }
  if (bind(fd, reinterpret_cast<const sockaddr*>(&l.addr), l.addr_len) != 0) {
    int err = errno;
    close(fd);
    return make_error("bind() to " + l.text + " failed (" + std::to_string(err) + ": " + strerror(err) + ")");
  }
  return fd;
}

}  // namespace

Result<int> open_listener(const config::Listen& l) {
  auto fd = make_socket(l, true);
  if (!fd) return fd;
  if (listen(*fd, l.backlog) != 0) {
    int err = errno;
    close(*fd);
    return make_error("listen() to " + l.text + " failed (" + std::to_string(err) + ": " + strerror(err) + ")");
  }
  return fd;
}

Status probe_address_free(const config::Listen& l) {
  auto fd = make_socket(l, false);
  if (!fd) return make_error(fd.error());
  close(*fd);
  return Ok{};
}

}  // namespace torii::net
