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

TEST(KeepalivePool, TakesOnlyLiveConnectionsOfThatPeer) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 4;
  KeepalivePool pool(loop, cfg);
  Nobody owner;
  SocketHandler h(&owner);
  Pair a, b;
  loop.add(a.ours, &h, EPOLLIN);
  loop.add(b.ours, &h, EPOLLIN);
  pool.put(a.ours, 0, 3);
  pool.put(b.ours, 1, 1);
  EXPECT_EQ(pool.idle(), 2u);
  EXPECT_EQ(pool.take(2).fd, -1);
  // The peer closes b: it is stale and never handed out.
  close(b.theirs);
  b.theirs = -1;
  EXPECT_EQ(pool.take(1).fd, -1);
  auto t = pool.take(0);
  EXPECT_EQ(t.fd, a.ours);
  EXPECT_EQ(t.requests, 3u);
  EXPECT_EQ(pool.idle(), 0u);
  close(t.fd);
}

TEST(KeepalivePool, UnaskedBytesMakeAConnectionStale) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 1;
  KeepalivePool pool(loop, cfg);
  Nobody owner;
  SocketHandler h(&owner);
  Pair a;
  loop.add(a.ours, &h, EPOLLIN);
  pool.put(a.ours, 0, 1);
  ASSERT_EQ(write(a.theirs, "x", 1), 1);
  EXPECT_EQ(pool.take(0).fd, -1);
}

TEST(KeepalivePool, KeepsAtMostN) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 2;
  KeepalivePool pool(loop, cfg);
  Nobody owner;
  SocketHandler h(&owner);
  Pair p[3];
  for (auto& x : p) {
    loop.add(x.ours, &h, EPOLLIN);
    pool.put(x.ours, 0, 1);
  }
  EXPECT_EQ(pool.idle(), 2u);
  // The oldest went first; the newest comes back first.
  auto t = pool.take(0);
  EXPECT_EQ(t.fd, p[2].ours);
  close(t.fd);
}

}  // namespace
}  // namespace torii::upstream
