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

// The peer's side of a connection we closed reads end of file.
bool closed_by_us(const Pair& p) {
  char c;
  return recv(p.theirs, &c, 1, MSG_DONTWAIT) == 0;
}

TEST(KeepalivePool, RetiredPoolClosesIdleAndLaterConnections) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 4;
  KeepalivePool pool(loop, cfg);
  Nobody owner;
  SocketHandler h(&owner);
  Pair idle, busy;
  loop.add(idle.ours, &h, EPOLLIN);
  loop.add(busy.ours, &h, EPOLLIN);
  pool.put(idle.ours, 0, 1);
  pool.retire(nullptr);
  EXPECT_EQ(pool.idle(), 0u);
  EXPECT_TRUE(closed_by_us(idle));
  // A request that was still running puts its connection back: closed.
  pool.put(busy.ours, 0, 1);
  EXPECT_EQ(pool.idle(), 0u);
  EXPECT_TRUE(closed_by_us(busy));
}

TEST(KeepalivePool, RetiredPoolHandsConnectionsToTheNextOne) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 4;
  KeepalivePool old_pool(loop, cfg);
  KeepalivePool next_pool(loop, cfg);
  Nobody owner;
  SocketHandler h(&owner);
  Pair a, b, gone;
  for (auto* p : {&a, &b, &gone}) loop.add(p->ours, &h, EPOLLIN);
  old_pool.put(a.ours, 0, 5);
  old_pool.put(gone.ours, 1, 1);
  auto forward = [&](int fd, int peer, uint64_t requests, std::unique_ptr<net::TlsClient>& tls) {
    if (peer != 0) return false;  // the new config has no such server
    next_pool.put(fd, 3, requests, std::move(tls));
    return true;
  };
  old_pool.retire(forward);
  EXPECT_EQ(old_pool.idle(), 0u);
  EXPECT_EQ(next_pool.idle(), 1u);
  EXPECT_TRUE(closed_by_us(gone));
  old_pool.put(b.ours, 0, 2);  // later, from a request on the old config
  EXPECT_EQ(next_pool.idle(), 2u);
  auto t = next_pool.take(3);
  EXPECT_EQ(t.fd, b.ours);
  EXPECT_EQ(t.requests, 2u);
  close(t.fd);
  t = next_pool.take(3);
  EXPECT_EQ(t.fd, a.ours);
  EXPECT_EQ(t.requests, 5u);
  close(t.fd);
}

}  // namespace
}  // namespace torii::upstream
