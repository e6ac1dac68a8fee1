#include "upstream/keepalive_pool.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/fd_budget.h"

namespace torii::upstream {

class KeepalivePool::Idle final : public core::IoHandler {
 public:
  Idle(KeepalivePool* pool, int fd, int peer, uint64_t requests, std::unique_ptr<net::TlsClient> tls)
      : pool_(pool), fd_(fd), peer_(peer), requests_(requests), tls_(std::move(tls)), timer_(&Idle::on_timer, this) {}
  ~Idle() override { close_fd(); }

  // Any event on an idle connection means it is finished: the server
  // closed it, reset it, or sent bytes nobody asked for.
  void on_io(uint32_t) override {
    if (pool_) pool_->evict(this);
  }
  static void on_timer(void* self) {
    auto* i = static_cast<Idle*>(self);
    if (i->pool_) i->pool_->evict(i);
  }
  void close_fd() {
    if (tls_) tls_->close_notify();
    tls_.reset();
    if (fd_ >= 0) ::close(fd_);  // closing also leaves the epoll set
    fd_ = -1;
  }
  int release_fd() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

  KeepalivePool* pool_;
  int fd_;
  int peer_;
  uint64_t requests_;
  std::unique_ptr<net::TlsClient> tls_;
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
    loop_.defer([keep = i] {});
  }
  idle_.clear();
  account();
}

void KeepalivePool::account() {
  core::FdBudget::process().add(int64_t(idle_.size()) - int64_t(counted_));
  counted_ = idle_.size();
}

KeepalivePool::Taken KeepalivePool::take(int peer) {
  for (auto it = idle_.begin(); it != idle_.end();) {
    auto entry = *it;
    if (entry->peer_ != peer) {
      ++it;
      continue;
    }
    it = idle_.erase(it);
    loop_.cancel(entry->timer_);
    entry->pool_ = nullptr;
    Taken t;
    t.requests = entry->requests_;
    t.tls = std::move(entry->tls_);
    int fd = entry->release_fd();
    loop_.defer([keep = entry] {});  // an event already reported for it is ignored
    if (connection_alive(fd)) {
      t.fd = fd;
      account();
      return t;
    }
    t.tls.reset();
    ::close(fd);  // stale: try the next one
  }
  account();
  return {};
}

void KeepalivePool::put(int fd, int peer, uint64_t requests, std::unique_ptr<net::TlsClient> tls) {
  if (retired_) {
    if (!forward_ || !forward_(fd, peer, requests, tls)) {
      if (tls) tls->close_notify();
      tls.reset();
      ::close(fd);  // closing also leaves the epoll set
    }
    return;
  }
  if (idle_.size() >= cfg_.keepalive && !idle_.empty()) evict(idle_.back().get());
  auto entry = std::make_shared<Idle>(this, fd, peer, requests, std::move(tls));
  if (!loop_.modify(fd, entry.get(), EPOLLIN | EPOLLRDHUP)) {
    entry->pool_ = nullptr;
    return;  // the destructor closes it
  }
  loop_.arm(entry->timer_, std::max<int64_t>(cfg_.keepalive_timeout.count(), 1));
  idle_.push_front(std::move(entry));
  account();
}

void KeepalivePool::retire(Forward forward) {
  if (retired_) return;
  retired_ = true;
  forward_ = std::move(forward);
  // Oldest first, so the most recently used arrive last and stay in front
  // of the next pool.
  while (!idle_.empty()) {
    auto entry = idle_.back();
    idle_.pop_back();
    loop_.cancel(entry->timer_);
    entry->pool_ = nullptr;
    const int peer = entry->peer_;
    const uint64_t requests = entry->requests_;
    auto tls = std::move(entry->tls_);
    const int fd = entry->release_fd();
    loop_.defer([keep = entry] {});  // an event already reported for it is ignored
    if (connection_alive(fd)) {
      put(fd, peer, requests, std::move(tls));
    } else {
      tls.reset();
      ::close(fd);
    }
  }
  account();
}

void KeepalivePool::evict(Idle* entry) {
  auto it = std::find_if(idle_.begin(), idle_.end(), [&](const auto& p) { return p.get() == entry; });
  if (it == idle_.end()) return;
  auto keep = *it;
  idle_.erase(it);
  loop_.cancel(keep->timer_);
  keep->pool_ = nullptr;
  keep->close_fd();
  loop_.defer([keep] {});
  account();
}

}  // namespace torii::upstream
