#include "stream/udp_listener.h"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "core/event_loop.h"
#include "stream/stream_worker.h"
#include "stream/udp_session.h"

namespace torii::stream {

namespace {

constexpr size_t kMaxDatagram = 65535;
constexpr int kBatch = 64;  // datagrams per turn; the rest is reported again (level-triggered)

}  // namespace

UdpListener::UdpListener(StreamWorker& w, int fd, std::shared_ptr<const config::Config> config,
                         const ListenGroup* group)
    : w_(w), fd_(fd), config_(std::move(config)), group_(group) {
  socklen_t len = sizeof local_;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&local_), &len);
}

UdpListener::~UdpListener() { close_listener(); }

bool UdpListener::watch() { return w_.loop().add(fd_, this, EPOLLIN, core::EventLoop::Trigger::level); }

void UdpListener::rebind(std::shared_ptr<const config::Config> config, const ListenGroup* group) {
  config_ = std::move(config);
  group_ = group;
}

void UdpListener::close_listener() {
  if (fd_ < 0) return;
  // The sessions answer through this socket: they end with it.
  auto members = std::move(members_);
  members_.clear();
  routes_.clear();
  for (UdpSession* s : members) s->listener_gone();
  w_.loop().remove(fd_);
  ::close(fd_);
  fd_ = -1;
}

std::string UdpListener::key(const sockaddr_storage& peer) {
  const size_t len = peer.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  std::string k(reinterpret_cast<const char*>(&peer), len);
  // Only family, port and address count (not sin6_flowinfo).
  if (peer.ss_family == AF_INET6) {
    auto& in6 = *reinterpret_cast<sockaddr_in6*>(k.data());
    in6.sin6_flowinfo = 0;
  }
  return k;
}

void UdpListener::forget(const UdpSession* s, const sockaddr_storage& peer) {
  auto it = routes_.find(key(peer));
  if (it != routes_.end() && it->second == s) routes_.erase(it);
}

void UdpListener::leave(UdpSession* s, const sockaddr_storage& peer) {
  forget(s, peer);
  members_.erase(s);
}

void UdpListener::on_io(uint32_t) {
  static thread_local std::vector<char> buf(kMaxDatagram);
  for (int i = 0; i < kBatch && fd_ >= 0; ++i) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&peer), &len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN, or an error a datagram's ICMP left: nothing to read
    }
    const std::string_view datagram(buf.data(), size_t(n));
    const std::string k = key(peer);
    if (auto it = routes_.find(k); it != routes_.end()) {
      it->second->from_client(datagram);
      continue;
    }
    UdpSession* s = w_.open_udp_session(*this, config_, *group_, peer, local_);
    if (!s) continue;  // worker_connections reached: dropped
    routes_[k] = s;
    members_.insert(s);
    s->start(datagram);
  }
}

}  // namespace torii::stream
