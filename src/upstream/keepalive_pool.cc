#include "upstream/keepalive_pool.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace torii::upstream {

class KeepalivePool::Idle final : public SocketOwner {
 public:
  Idle(KeepalivePool* pool, int fd, int peer, uint64_t requests, std::shared_ptr<SocketHandler> handler)
      : pool_(pool),
        fd_(fd),
        peer_(peer),
        requests_(requests),
        handler_(std::move(handler)),
        timer_(&Idle::on_timer, this) {
    handler_->set_owner(this);
  }
  ~Idle() override { close_fd(); }

  // The server closed or reset the connection, or sent bytes nobody
  // asked for: it is finished. (Write readiness alone means nothing.)
  void on_socket_io(uint32_t events) override {
    if (pool_ && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) pool_->evict(this);
  }
  static void on_timer(void* self) {
    auto* i = static_cast<Idle*>(self);
    if (i->pool_) i->pool_->evict(i);
  }
  // Closes the socket (which also leaves the epoll set); the handler is
  // freed at the end of the turn, after any event already reported for it.
  void close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (handler_) handler_->set_owner(nullptr);
  }

  KeepalivePool* pool_;
  int fd_;
  int peer_;
  uint64_t requests_;
  std::shared_ptr<SocketHandler> handler_;
  core::Timer timer_;
};

bool connection_alive(int fd) {
  char c;
  ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

KeepalivePool::KeepalivePool(core::EventLoop& loop, const config::UpstreamGroupConfig& cfg)
    : loop_(loop), cfg_(cfg) {}

KeepalivePool::~KeepalivePool() {
  for (auto& i : idle_) {
    loop_.cancel(i->timer_);
    i->pool_ = nullptr;
    i->close_fd();
    SocketHandler::retire(loop_, i->handler_);
  }
}

KeepalivePool::Taken KeepalivePool::take(int peer) {
  for (auto it = idle_.begin(); it != idle_.end();) {
    if ((*it)->peer_ != peer) {
      ++it;
      continue;
    }
    std::shared_ptr<Idle> entry = std::move(*it);
    it = idle_.erase(it);
    loop_.cancel(entry->timer_);
    entry->pool_ = nullptr;
    entry->handler_->set_owner(nullptr);
    Taken t;
    t.fd = std::exchange(entry->fd_, -1);
    t.requests = entry->requests_;
    t.handler = std::move(entry->handler_);
    // Not in any callback of its own here: the entry can go now.
    if (connection_alive(t.fd)) return t;
    ::close(t.fd);  // stale: try the next one
    SocketHandler::retire(loop_, t.handler);
  }
  return {};
}

void KeepalivePool::put(int fd, int peer, uint64_t requests, std::shared_ptr<SocketHandler> handler) {
  if (idle_.size() >= cfg_.keepalive && !idle_.empty()) evict(idle_.back().get());
  auto entry = std::make_shared<Idle>(this, fd, peer, requests, std::move(handler));
  loop_.arm(entry->timer_, std::max<int64_t>(cfg_.keepalive_timeout.count(), 1));
  idle_.push_front(std::move(entry));
}

void KeepalivePool::evict(Idle* entry) {
  auto it = std::find_if(idle_.begin(), idle_.end(), [&](const auto& p) { return p.get() == entry; });
  if (it == idle_.end()) return;
  auto keep = *it;
  idle_.erase(it);
  loop_.cancel(keep->timer_);
  keep->pool_ = nullptr;
  keep->close_fd();
  SocketHandler::retire(loop_, keep->handler_);
  loop_.defer([keep] {});  // evict may run inside the entry's own callback
}

}  // namespace torii::upstream
