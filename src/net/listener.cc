#include "net/listener.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "log/error_log.h"
#include "net/unix_listeners.h"

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

// The listen parameters that are socket options. As nginx, a refusal is
// logged as an alert and the socket still serves; accepted sockets inherit
// SO_KEEPALIVE, its timers and the buffer sizes from the listening one.
void apply_listen_options(int fd, const config::Listen& l) {
  auto set = [&](int level, int name, int value, const char* what) {
    if (setsockopt(fd, level, name, &value, sizeof value) != 0)
      TORII_LOG(alert, "setsockopt(%s, %d) %s failed, ignored (%d: %s)", what, value, l.text.c_str(), errno,
                strerror(errno));
  };
  if (l.rcvbuf > 0) set(SOL_SOCKET, SO_RCVBUF, l.rcvbuf, "SO_RCVBUF");
  if (l.sndbuf > 0) set(SOL_SOCKET, SO_SNDBUF, l.sndbuf, "SO_SNDBUF");
  if (l.so_keepalive >= 0) set(SOL_SOCKET, SO_KEEPALIVE, l.so_keepalive, "SO_KEEPALIVE");
  if (l.keepidle > 0) set(IPPROTO_TCP, TCP_KEEPIDLE, l.keepidle, "TCP_KEEPIDLE");
  if (l.keepintvl > 0) set(IPPROTO_TCP, TCP_KEEPINTVL, l.keepintvl, "TCP_KEEPINTVL");
  if (l.keepcnt > 0) set(IPPROTO_TCP, TCP_KEEPCNT, l.keepcnt, "TCP_KEEPCNT");
  if (l.fastopen > 0) set(IPPROTO_TCP, TCP_FASTOPEN, l.fastopen, "TCP_FASTOPEN");
  if (l.defer_accept_seconds > 0) set(IPPROTO_TCP, TCP_DEFER_ACCEPT, l.defer_accept_seconds, "TCP_DEFER_ACCEPT");
}

Result<int> open_listener(const config::Listen& l) {
  if (l.addr.ss_family == AF_UNIX) return unix_listeners::open(l);
  auto fd = make_socket(l, true);
  if (!fd) return fd;
  apply_listen_options(*fd, l);  // before listen(): the window scale follows SO_RCVBUF
  if (listen(*fd, l.backlog) != 0) {
    int err = errno;
    close(*fd);
    return make_error("listen() to " + l.text + " failed (" + std::to_string(err) + ": " + strerror(err) + ")");
  }
  return fd;
}

uint32_t accept_events(const config::Listen& l) {
  return l.addr.ss_family == AF_UNIX ? EPOLLIN | EPOLLEXCLUSIVE : EPOLLIN;
}

Status probe_address_free(const config::Listen& l) {
  if (l.addr.ss_family == AF_UNIX) {
    auto fd = unix_listeners::open(l);
    if (!fd) return make_error(fd.error());
    close(*fd);
    return Ok{};
  }
  auto fd = make_socket(l, false);
  if (!fd) return make_error(fd.error());
  close(*fd);
  return Ok{};
}

}  // namespace torii::net
