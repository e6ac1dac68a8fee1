#include "core/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace torii::core {

bool notify(std::string_view state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || !*path) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = std::strlen(path);
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path, len);
  if (path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
  socklen_t addr_len = socklen_t(offsetof(sockaddr_un, sun_path) + len + (path[0] == '@' ? 0 : 1));
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ssize_t n = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&addr),
                       addr_len);
  ::close(fd);
  return n == ssize_t(state.size());
}

void notify_ready() {
  notify("READY=1\nSTATUS=serving\nMAINPID=" + std::to_string(::getpid()));
}

void notify_reloading() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const unsigned long long usec = (unsigned long long)ts.tv_sec * 1'000'000ULL + (unsigned long long)ts.tv_nsec / 1000;
  notify("RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=" + std::to_string(usec));
}

void notify_stopping() { notify("STOPPING=1\nSTATUS=stopping"); }

}  // namespace torii::core
