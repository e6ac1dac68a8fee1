// Idle upstream connections of one group, per worker (nginx's "keepalive
// N"): at most N, the oldest closed first, each closed after
// keepalive_timeout or as soon as the server closes it or sends anything
// unasked. Before reuse a connection is checked once more (a peek), so a
// request is not written into a connection the server has already closed.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>

#include "config/upstream_config.h"
#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "net/tls_client.h"

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
    std::unique_ptr<net::TlsClient> tls;  // null: plain TCP
  };
  // An idle, live connection to `peer`, now owned by the caller (still
  // registered with the loop: the caller re-registers it with modify()).
  Taken take(int peer);
  // Keeps a connection whose last response was read to its end (once
  // retired: hands it on, or closes it).
  // A TLS connection keeps its TlsClient with it.
  void put(int fd, int peer, uint64_t requests, std::unique_ptr<net::TlsClient> tls = nullptr);

  // Where a retired pool's connections go: true if `forward` kept the
  // connection (now its owner), false to have it closed.
  using Forward = std::function<bool(int fd, int peer, uint64_t requests, std::unique_ptr<net::TlsClient>& tls)>;
  // A reload replaced this pool's group: its idle connections leave now,
  // to `forward` (the same upstream in the new config) or closed, and so
  // does every connection put back later by a request still running on the
  // old config. Nothing stays open for the retired config.
  void retire(Forward forward);
  bool retired() const { return retired_; }

  size_t idle() const { return idle_.size(); }
  bool enabled() const { return cfg_.keepalive > 0; }

 private:
  class Idle;
  void evict(Idle* entry);  // closes it; destroyed at the end of the turn
  // Brings the process's descriptor budget up to date with idle_.size().
  void account();

  core::EventLoop& loop_;
  const config::UpstreamGroupConfig& cfg_;
  std::list<std::shared_ptr<Idle>> idle_;  // most recently used first
  bool retired_ = false;
  Forward forward_;
  size_t counted_ = 0;  // idle connections the descriptor budget knows of
};

// True if an idle connection is still open with nothing unread on it.
bool connection_alive(int fd);

}  // namespace torii::upstream
