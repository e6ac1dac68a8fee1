#include "stream/udp_listener.h"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/event_loop.h"
#include "net/datagram_listener.h"
#include "net/packet_info.h"
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
  wildcard_ = net::is_wildcard(local_);
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
  writers_.clear();
  for (UdpSession* s : members) s->listener_gone();
  w_.loop().remove(fd_);
  ::close(fd_);
  fd_ = -1;
}

namespace {

std::string address_bytes(const sockaddr_storage& a) {
  const size_t len = a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  std::string k(reinterpret_cast<const char*>(&a), len);
  // Only family, port and address count (not sin6_flowinfo or the padding).
  if (a.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(k.data())->sin6_flowinfo = 0;
  } else {
    std::memset(reinterpret_cast<sockaddr_in*>(k.data())->sin_zero, 0, sizeof(sockaddr_in::sin_zero));
  }
  return k;
}

}  // namespace

std::string UdpListener::key(const sockaddr_storage& peer, const sockaddr_storage& local) const {
  return wildcard_ ? address_bytes(peer) + address_bytes(local) : address_bytes(peer);
}

void UdpListener::forget(const UdpSession* s, const sockaddr_storage& peer, const sockaddr_storage& local) {
  auto it = routes_.find(key(peer, local));
  if (it != routes_.end() && it->second == s) routes_.erase(it);
}

void UdpListener::leave(UdpSession* s, const sockaddr_storage& peer, const sockaddr_storage& local) {
  forget(s, peer, local);
  members_.erase(s);
  writers_.erase(s);
}

void UdpListener::wait_writable(UdpSession* s) {
  if (fd_ < 0) return;
  if (writers_.empty()) w_.loop().modify(fd_, this, EPOLLIN | EPOLLOUT, core::EventLoop::Trigger::level);
  writers_.insert(s);
}

void UdpListener::on_io(uint32_t events) {
  if (events & EPOLLOUT) {
    // Each waiting session sends what waited; one the socket refuses
    // again asks again.
    auto writers = std::move(writers_);
    writers_.clear();
    for (UdpSession* s : writers) {
      if (fd_ < 0) return;
      s->client_writable();
    }
    if (writers_.empty() && fd_ >= 0) w_.loop().modify(fd_, this, EPOLLIN, core::EventLoop::Trigger::level);
  }
  if (!(events & (EPOLLIN | EPOLLERR))) return;
  static thread_local std::vector<char> buf(kMaxDatagram);
  for (int i = 0; i < kBatch && fd_ >= 0; ++i) {
    sockaddr_storage peer{};
    iovec iov{buf.data(), buf.size()};
    alignas(cmsghdr) char control[net::kPacketInfoSpace + 64];
    msghdr msg{};
    msg.msg_name = &peer;
    msg.msg_namelen = sizeof peer;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_, &msg, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN, or an error a datagram's ICMP left: nothing to read
    }
    sockaddr_storage local = local_;
    if (wildcard_) {
      const uint16_t port_be = local_.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(local_).sin6_port
                                                            : reinterpret_cast<const sockaddr_in&>(local_).sin_port;
      net::datagram_destination(msg, local, port_be);
    }
    const std::string_view datagram(buf.data(), size_t(n));
    const std::string k = key(peer, local);
    if (auto it = routes_.find(k); it != routes_.end()) {
      it->second->from_client(datagram);
      continue;
    }
    UdpSession* s = w_.open_udp_session(*this, config_, *group_, peer, local);
    if (!s) continue;  // worker_connections reached: dropped
    routes_[k] = s;
    members_.insert(s);
    s->start(datagram);
  }
}

}  // namespace torii::stream
