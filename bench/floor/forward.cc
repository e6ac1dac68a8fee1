#include "forward.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace floor_bench {
namespace {

class Pair;

// One direction's source: its descriptor, and what was read from it but
// not yet written to the other side.
class Side final : public Handler {
 public:
  Side(Pair& pair, int fd) : pair_(pair), fd_(fd) {}
  void on_event(uint32_t events) override;

  Pair& pair_;
  int fd_;
  char buf_[16384];
  size_t off_ = 0, len_ = 0;  // pending bytes of buf_ for the other side
  bool unread_ = false;       // an EPOLLIN edge came after the last short read
};

// Both sides; freed at the end of the turn it closes in.
class Pair final : public Handler {
 public:
  Pair(Loop& loop, int client, int backend) : loop_(loop), client_(*this, client), backend_(*this, backend) {}

  // Moves bytes from `from` to `to` until `from` is drained (a short read
  // empties a TCP socket: the next byte brings a new edge) or `to` is full
  // (then the next EPOLLOUT edge of `to` resumes it).
  void pump(Side& from, Side& to) {
    if (closed_) return;
    while (true) {
      if (from.off_ < from.len_) {
        ssize_t n = send(to.fd_, from.buf_ + from.off_, from.len_ - from.off_, MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EAGAIN || errno == EINTR) return;
          return close_both();
        }
        from.off_ += size_t(n);
        if (from.off_ < from.len_) return;
      }
      // Only after an EPOLLIN edge: epoll reports EPOLLOUT beside every
      // EPOLLIN of a writable socket, and a read then would say EAGAIN.
      if (!from.unread_) return;
      ssize_t n = recv(from.fd_, from.buf_, sizeof from.buf_, 0);
      if (n == 0) return close_both();
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;
        return close_both();
      }
      from.off_ = 0;
      from.len_ = size_t(n);
      from.unread_ = from.len_ == sizeof from.buf_;  // a short read emptied the socket
    }
  }

  void on_event(Side& side, uint32_t events) {
    if (closed_) return;
    if (events & EPOLLERR) return close_both();
    Side& other = &side == &client_ ? backend_ : client_;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) {
      side.unread_ = true;
      pump(side, other);
    }
    if (events & EPOLLOUT) pump(other, side);
  }

  void close_both() {
    if (closed_) return;
    closed_ = true;
    close(client_.fd_);
    close(backend_.fd_);
    loop_.retire(this);
  }

  void on_event(uint32_t) override {}  // registered through its sides only

  Loop& loop_;
  Side client_, backend_;
  bool closed_ = false;
};

void Side::on_event(uint32_t events) { pair_.on_event(*this, events); }

int connect_backend(const sockaddr_in& addr) {
  // A blocking connect: the backends are local, and this runs once per
  // client connection, not per request.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, O_NONBLOCK);
  return fd;
}

}  // namespace

void forward(Loop& loop, int fd, ForwardSite& site) {
  const sockaddr_in& addr = site.backends[site.next++ % site.backends.size()];
  int backend = connect_backend(addr);
  if (backend < 0) {
    perror("connect to backend");
    close(fd);
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(backend, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto* pair = new Pair(loop, fd, backend);
  loop.add(fd, &pair->client_, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
  loop.add(backend, &pair->backend_, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
}

}  // namespace floor_bench
