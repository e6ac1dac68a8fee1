// Idle upstream connections of one group, per worker (nginx's "keepalive
// N"): at most N stay idle, the oldest closed first, each closed after
// keepalive_timeout or as soon as the server closes it or sends anything
// unasked (what a protocol with connection state, HTTP/2, accepts while
// idle -- PING, SETTINGS -- is answered instead: connection_state.h).
//
// Those beyond N are closed once they have been idle kExcessLingerMs, not
// the moment they come back. When more than N requests are in flight at
// once (100 clients, keepalive 32), the number in flight swings from one
// loop turn to the next; closing the excess at once made the next swing
// open them again, a connect and a close per request for a large share of
// the requests. Kept a little longer they are taken again instead. This
// never holds more connections than were busy at once within the linger
// (a connection is only opened when none is idle), and a short descriptor
// budget (core/fd_budget.h) has them closed without waiting.
//
// A connection stays registered with the event loop for its whole life,
// with one SocketHandler that dispatches to whoever owns the connection:
// the pool while it is idle, the request while one uses it. Handing it
// over is a pointer change, not an epoll_ctl. While idle, any event that
// says the server closed it, failed it or wrote to it removes it, so a
// request only gets a connection the server closed if the close arrived in
// the same loop turn; the proxy then sends the request again on another
// connection (handlers/proxy.cc, try_failed).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>

#include "config/upstream_config.h"
#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "net/tls_client.h"
#include "upstream/connection_state.h"
#include "upstream/socket_handler.h"

namespace torii::upstream {

// An upstream connection as it passes between requests and the pool.
struct KeptConnection {
  int fd = -1;
  std::shared_ptr<SocketHandler> handler;  // registered with the loop for fd
  std::unique_ptr<net::TlsClient> tls;     // null: plain TCP
  uint64_t requests = 0;                   // served on it so far
  int64_t opened_ms = 0;                   // when it was made (keepalive_time)
  std::unique_ptr<ConnectionState> state;  // the protocol's, if it keeps any
};

class KeepalivePool {
 public:
  KeepalivePool(core::EventLoop& loop, const config::UpstreamGroupConfig& cfg);
  ~KeepalivePool();
  KeepalivePool(const KeepalivePool&) = delete;
  KeepalivePool& operator=(const KeepalivePool&) = delete;

  // An idle connection to `peer`, now owned by the caller, who makes itself
  // the handler's owner; fd -1 if none. `peek`: first check that nothing
  // came on it since the last loop turn (for a request that could not be
  // sent again should the connection turn out closed).
  KeptConnection take(int peer, bool peek = false);
  // Keeps a connection whose last response was read to its end (once
  // retired: hands it on, or closes it). A TLS connection keeps its
  // TlsClient with it.
  void put(KeptConnection conn, int peer);

  // Where a retired pool's connections go: true if `forward` kept the
  // connection (now its owner), false to have it closed.
  using Forward = std::function<bool(KeptConnection& conn, int peer)>;
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
  void evict(Idle* entry);  // closes it
  // Moves an emptied entry from idle_ to spare_.
  void recycle(std::list<Idle>::iterator it);
  // Brings the process's descriptor budget up to date with idle_.size().
  void account();
  // Closes the oldest beyond the cap at the end of the loop turn.
  void schedule_trim();
  // Closes the oldest beyond the cap that have lingered long enough, and
  // arms trim_timer_ for the next one.
  void trim();
  static void on_trim_timer(void* self);

  static constexpr int64_t kExcessLingerMs = 1000;

  core::EventLoop& loop_;
  const config::UpstreamGroupConfig& cfg_;
  std::list<Idle> idle_;  // most recently used first
  std::list<Idle> spare_;  // emptied entries, reused by put (no allocation per request)
  bool retired_ = false;
  Forward forward_;
  size_t counted_ = 0;  // idle connections the descriptor budget knows of
  bool trim_scheduled_ = false;
  core::Timer trim_timer_;
  std::shared_ptr<char> alive_ = std::make_shared<char>();  // for the deferred trim
};

// True if an idle connection is still open with nothing unread on it.
bool connection_alive(int fd);
// The same for a kept connection, whose protocol state (if any) may read,
// and answer, what came on it.
bool still_usable(KeptConnection& conn);
// Closes a connection: TLS's close_notify, the descriptor (which also
// leaves the epoll set), its handler retired at the end of the turn.
void close_connection(core::EventLoop& loop, KeptConnection& conn);

}  // namespace torii::upstream
