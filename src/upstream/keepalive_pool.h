// Idle upstream connections of one group, per worker (nginx's "keepalive
// N"): at most N, the oldest closed first, each closed after
// keepalive_timeout or as soon as the server closes it or sends anything
// unasked. Before reuse a connection is checked once more (a peek), so a
// request is not written into a connection the server has already closed.
//
// A connection keeps its epoll registration (read, write and hang-up,
// edge-triggered) and its SocketHandler for its whole life: going idle and
// coming back only changes who the handler calls, with no epoll_ctl.
#pragma once

#include <cstdint>
#include <list>
#include <memory>

#include "config/upstream_config.h"
#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "upstream/socket_handler.h"

namespace torii::upstream {

class KeepalivePool {
 public:
  KeepalivePool(core::EventLoop& loop, const config::UpstreamGroupConfig& cfg);
  ~KeepalivePool();
  KeepalivePool(const KeepalivePool&) = delete;
  KeepalivePool& operator=(const KeepalivePool&) = delete;

  struct Taken {
    int fd = -1;
    uint64_t requests = 0;  // served on it so far
    // Still registered with the loop; calls nobody until the caller
    // makes itself the owner.
    std::shared_ptr<SocketHandler> handler;
  };
  // An idle, live connection to `peer`, now owned by the caller.
  Taken take(int peer);
  // Keeps a connection whose last response was read to its end, with the
  // handler it is registered with.
  void put(int fd, int peer, uint64_t requests, std::shared_ptr<SocketHandler> handler);

  size_t idle() const { return idle_.size(); }
  bool enabled() const { return cfg_.keepalive > 0; }

 private:
  class Idle;
  void evict(Idle* entry);  // closes it; destroyed at the end of the turn

  core::EventLoop& loop_;
  const config::UpstreamGroupConfig& cfg_;
  std::list<std::shared_ptr<Idle>> idle_;  // most recently used first
};

// True if an idle connection is still open with nothing unread on it.
bool connection_alive(int fd);

}  // namespace torii::upstream
