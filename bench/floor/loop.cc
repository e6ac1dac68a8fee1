#include "loop.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace floor_bench {

Loop::Loop() : epfd_(epoll_create1(EPOLL_CLOEXEC)) {
  if (epfd_ < 0) {
    perror("epoll_create1");
    exit(1);
  }
}

void Loop::add(int fd, Handler* h, uint32_t events, bool level) {
  epoll_event ev{};
  ev.events = events | (level ? 0u : uint32_t(EPOLLET));
  ev.data.ptr = h;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) < 0) perror("epoll_ctl");
}

void Loop::run() {
  constexpr int kMaxEvents = 512;  // as torii's loop
  epoll_event events[kMaxEvents];
  while (true) {
    int n = epoll_wait(epfd_, events, kMaxEvents, -1);
    if (n < 0 && errno != EINTR) {
      perror("epoll_wait");
      exit(1);
    }
    for (int i = 0; i < n; ++i) static_cast<Handler*>(events[i].data.ptr)->on_event(events[i].events);
    retired_.clear();
  }
}

}  // namespace floor_bench
