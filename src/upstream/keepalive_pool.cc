#include "upstream/keepalive_pool.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/fd_budget.h"

namespace torii::upstream {

class KeepalivePool::Idle final : public SocketOwner {
 public:
  explicit Idle(KeepalivePool* pool) : pool_(pool), timer_(&Idle::on_timer, this) {}

  // The server closed or reset the connection, or sent bytes nobody asked
  // for: it is finished. An edge with nothing to read (reported for the
  // response's last bytes, which were read before the connection came
  // back) changes nothing.
  void on_socket_io(uint32_t events) override {
    if (!(events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP)) && (!(events & EPOLLIN) || connection_alive(conn_.fd)))
      return;
    pool_->evict(this);
  }
  static void on_timer(void* self) {
    auto* i = static_cast<Idle*>(self);
    i->pool_->evict(i);
  }

  KeepalivePool* pool_;
  KeptConnection conn_;
  int peer_ = -1;
  core::Timer timer_;
  std::list<Idle>::iterator self_;  // its place in the pool's list
};

bool connection_alive(int fd) {
  char c;
  ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

void close_connection(core::EventLoop& loop, KeptConnection& conn) {
  if (conn.tls) conn.tls->close_notify();
  conn.tls.reset();
  if (conn.fd >= 0) ::close(conn.fd);  // closing also leaves the epoll set
  conn.fd = -1;
  SocketHandler::retire(loop, conn.handler);
}

KeepalivePool::KeepalivePool(core::EventLoop& loop, const config::UpstreamGroupConfig& cfg)
    : loop_(loop), cfg_(cfg) {}

KeepalivePool::~KeepalivePool() {
  for (auto& i : idle_) {
    loop_.cancel(i.timer_);
    close_connection(loop_, i.conn_);
  }
  idle_.clear();
  account();
}

void KeepalivePool::account() {
  core::FdBudget::process().add(int64_t(idle_.size()) - int64_t(counted_));
  counted_ = idle_.size();
}

KeptConnection KeepalivePool::take(int peer, bool peek) {
  for (auto it = idle_.begin(); it != idle_.end();) {
    if (it->peer_ != peer) {
      ++it;
      continue;
    }
    loop_.cancel(it->timer_);
    KeptConnection conn = std::move(it->conn_);
    auto next = std::next(it);
    recycle(it);
    it = next;
    conn.handler->set_owner(nullptr);  // the caller's from now on
    if (!peek || connection_alive(conn.fd)) {
      account();
      return conn;
    }
    close_connection(loop_, conn);  // stale: try the next one
  }
  account();
  return {};
}

void KeepalivePool::put(KeptConnection conn, int peer) {
  if (retired_) {
    if (!forward_ || !forward_(conn, peer)) close_connection(loop_, conn);
    return;
  }
  if (!conn.handler) {  // never registered: nothing could tell it closed
    close_connection(loop_, conn);
    return;
  }
  // Over the cap, the oldest are closed at the end of this loop turn, not
  // now: at saturation one epoll batch carries both responses (connections
  // coming back) and new requests (connections wanted), and a connection
  // closed here would be replaced by a connect a few events later.
  if (idle_.size() >= cfg_.keepalive) schedule_trim();
  if (spare_.empty()) {
    idle_.emplace_front(this);
  } else {
    idle_.splice(idle_.begin(), spare_, spare_.begin());
  }
  auto& entry = idle_.front();
  entry.conn_ = std::move(conn);
  entry.peer_ = peer;
  entry.self_ = idle_.begin();
  entry.conn_.handler->set_owner(&entry);
  loop_.arm(entry.timer_, std::max<int64_t>(cfg_.keepalive_timeout.count(), 1));
  account();
}

void KeepalivePool::schedule_trim() {
  if (trim_scheduled_) return;
  trim_scheduled_ = true;
  std::weak_ptr<char> alive = alive_;
  loop_.defer([this, alive] {
    if (alive.expired()) return;
    trim_scheduled_ = false;
    while (idle_.size() > cfg_.keepalive) evict(&idle_.back());
  });
}

void KeepalivePool::retire(Forward forward) {
  if (retired_) return;
  retired_ = true;
  forward_ = std::move(forward);
  // Oldest first, so the most recently used arrive last and stay in front
  // of the next pool.
  while (!idle_.empty()) {
    auto& entry = idle_.back();
    loop_.cancel(entry.timer_);
    const int peer = entry.peer_;
    KeptConnection conn = std::move(entry.conn_);
    recycle(entry.self_);
    conn.handler->set_owner(nullptr);
    if (connection_alive(conn.fd)) {
      put(std::move(conn), peer);
    } else {
      close_connection(loop_, conn);
    }
  }
  account();
}

void KeepalivePool::evict(Idle* entry) {
  loop_.cancel(entry->timer_);
  close_connection(loop_, entry->conn_);
  recycle(entry->self_);
  account();
}

void KeepalivePool::recycle(std::list<Idle>::iterator it) {
  spare_.splice(spare_.begin(), idle_, it);
}

}  // namespace torii::upstream
