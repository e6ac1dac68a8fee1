#include "upstream/keepalive_pool.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "core/fd_budget.h"

namespace torii::upstream {

class KeepalivePool::Idle final : public SocketOwner {
 public:
  explicit Idle(KeepalivePool* pool) : pool_(pool), timer_(&Idle::on_timer, this) {}

  // The server closed or reset the connection, or sent bytes nobody asked
  // for (as nginx: any byte closes an HTTP/1 connection; a protocol with
  // state of its own judges, and answers, its control traffic): it is
  // finished. An edge with nothing to read (reported for the response's
  // last bytes, which were read before the connection came back) changes
  // nothing.
  void on_socket_io(uint32_t events) override {
    if (!(events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP)) && (!(events & EPOLLIN) || still_usable(conn_))) return;
    pool_->evict(this);
  }
  static void on_timer(void* self) {
    auto* i = static_cast<Idle*>(self);
    i->pool_->evict(i);
  }

  KeepalivePool* pool_;
  KeptConnection conn_;
  int peer_ = -1;
  int64_t since_ms_ = 0;  // when it was put back
  core::Timer timer_;
  std::list<Idle>::iterator self_;  // its place in the pool's list
};

bool connection_alive(int fd) {
  char c;
  ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

namespace {

// Reads what came on an idle connection whose protocol keeps state, hands
// it to that state and sends its answer. False: the connection must close
// (the server closed it, the state refused the bytes, or the answer did
// not fit in the socket at once).
bool answer_idle_input(KeptConnection& conn) {
  char buf[4096];
  std::string reply;
  for (;;) {
    ssize_t n = 0;
    if (conn.tls) {
      const auto r = conn.tls->read(buf, sizeof buf);
      if (r.status == net::IoStatus::again) break;
      if (r.status != net::IoStatus::ok) return false;
      n = ssize_t(r.bytes);
    } else {
      n = ::recv(conn.fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) return false;
    }
    if (!conn.state->idle_input(std::string_view(buf, size_t(n)), reply)) return false;
  }
  size_t off = 0;
  while (off < reply.size()) {
    ssize_t n = 0;
    if (conn.tls) {
      const auto r = conn.tls->write(reply.data() + off, reply.size() - off);
      if (r.status != net::IoStatus::ok) return false;
      n = ssize_t(r.bytes);
    } else {
      n = ::send(conn.fd, reply.data() + off, reply.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
    }
    off += size_t(n);
  }
  return true;
}

}  // namespace

bool still_usable(KeptConnection& conn) {
  return conn.state ? answer_idle_input(conn) : connection_alive(conn.fd);
}

void close_connection(core::EventLoop& loop, KeptConnection& conn) {
  if (conn.tls) conn.tls->close_notify();
  conn.tls.reset();
  if (conn.fd >= 0) ::close(conn.fd);  // closing also leaves the epoll set
  conn.fd = -1;
  SocketHandler::retire(loop, conn.handler);
}

KeepalivePool::KeepalivePool(core::EventLoop& loop, const config::UpstreamGroupConfig& cfg)
    : loop_(loop), cfg_(cfg), trim_timer_(&KeepalivePool::on_trim_timer, this) {}

KeepalivePool::~KeepalivePool() {
  loop_.cancel(trim_timer_);
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
    if (!peek || still_usable(conn)) {
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
  // Over the cap, the oldest are closed at the end of this loop turn at the
  // earliest, not now: at saturation one epoll batch carries both responses
  // (connections coming back) and new requests (connections wanted), and a
  // connection closed here would be replaced by a connect a few events
  // later. See trim() for how long they may stay.
  if (idle_.size() >= cfg_.keepalive) schedule_trim();
  if (spare_.empty()) {
    idle_.emplace_front(this);
  } else {
    idle_.splice(idle_.begin(), spare_, spare_.begin());
  }
  auto& entry = idle_.front();
  entry.conn_ = std::move(conn);
  entry.peer_ = peer;
  entry.since_ms_ = loop_.now_ms();
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
    trim();
  });
}

void KeepalivePool::trim() {
  const int64_t now = loop_.now_ms();
  while (idle_.size() > cfg_.keepalive) {
    Idle& oldest = idle_.back();
    const int64_t idle_for = now - oldest.since_ms_;
    if (idle_for < kExcessLingerMs && core::FdBudget::process().room_for_connection()) {
      loop_.arm(trim_timer_, kExcessLingerMs - idle_for);
      return;
    }
    evict(&oldest);
  }
  loop_.cancel(trim_timer_);
}

void KeepalivePool::on_trim_timer(void* self) { static_cast<KeepalivePool*>(self)->trim(); }

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
    if (still_usable(conn)) {
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
