#include "upstream/keepalive_pool.h"

#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "upstream/socket_handler.h"

namespace torii::upstream {
namespace {

struct Pair {
  int ours = -1;
  int theirs = -1;
  Pair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    ours = fds[0];
    theirs = fds[1];
  }
  ~Pair() {
    if (theirs >= 0) close(theirs);
  }
};

class Nobody : public SocketOwner {
 public:
  void on_socket_io(uint32_t) override {}
};

// A socket registered as the proxy registers its upstream connections.
std::shared_ptr<SocketHandler> registered(core::EventLoop& loop, int fd, SocketOwner* owner) {
  auto h = std::make_shared<SocketHandler>(owner);
  EXPECT_TRUE(loop.add(fd, h.get(), EPOLLIN | EPOLLOUT | EPOLLRDHUP));
  return h;
}

TEST(KeepalivePool, TakesOnlyLiveConnectionsOfThatPeer) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 4;
  KeepalivePool pool(loop, cfg);
  Nobody owner;
  Pair a, b;
  auto ha = registered(loop, a.ours, &owner);
  pool.put(a.ours, 0, 3, ha);
  pool.put(b.ours, 1, 1, registered(loop, b.ours, &owner));
  EXPECT_EQ(pool.idle(), 2u);
  EXPECT_EQ(pool.take(2).fd, -1);
  // The peer closes b: it is stale and never handed out.
  close(b.theirs);
  b.theirs = -1;
  EXPECT_EQ(pool.take(1).fd, -1);
  auto t = pool.take(0);
  EXPECT_EQ(t.fd, a.ours);
  EXPECT_EQ(t.requests, 3u);
  EXPECT_EQ(t.handler, ha);  // the same registration comes back
  EXPECT_EQ(pool.idle(), 0u);
  close(t.fd);
}

TEST(KeepalivePool, UnaskedBytesMakeAConnectionStale) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 1;
  KeepalivePool pool(loop, cfg);
  Nobody owner;
  Pair a;
  pool.put(a.ours, 0, 1, registered(loop, a.ours, &owner));
  ASSERT_EQ(write(a.theirs, "x", 1), 1);
  EXPECT_EQ(pool.take(0).fd, -1);
}

TEST(KeepalivePool, KeepsAtMostN) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 2;
  KeepalivePool pool(loop, cfg);
  Nobody owner;
  Pair p[3];
  for (auto& x : p) pool.put(x.ours, 0, 1, registered(loop, x.ours, &owner));
  EXPECT_EQ(pool.idle(), 2u);
  // The oldest went first; the newest comes back first.
  auto t = pool.take(0);
  EXPECT_EQ(t.fd, p[2].ours);
  close(t.fd);
}

// While idle, the connection's handler calls the pool: an event on it (the
// server closed) evicts it at once, with no peek needed.
TEST(KeepalivePool, AnEventOnAnIdleConnectionEvictsIt) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 2;
  KeepalivePool pool(loop, cfg);
  Nobody owner;
  Pair a;
  auto h = registered(loop, a.ours, &owner);
  pool.put(a.ours, 0, 1, h);
  ASSERT_EQ(pool.idle(), 1u);
  h->on_io(EPOLLOUT);  // write readiness alone means nothing
  EXPECT_EQ(pool.idle(), 1u);
  h->on_io(EPOLLIN | EPOLLRDHUP);
  EXPECT_EQ(pool.idle(), 0u);
}

}  // namespace
}  // namespace torii::upstream
