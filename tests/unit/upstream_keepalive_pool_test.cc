#include "upstream/keepalive_pool.h"

#include <gtest/gtest.h>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

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
  void close_theirs() {
    close(theirs);
    theirs = -1;
  }
};

// Records the events a connection's owner of the moment receives.
class Recorder : public SocketOwner {
 public:
  void on_socket_io(uint32_t events) override {
    ++calls;
    last = events;
  }
  int calls = 0;
  uint32_t last = 0;
};

// A connection as the proxy registers it: once, for its whole life.
KeptConnection registered(core::EventLoop& loop, int fd, uint64_t requests, SocketOwner* owner = nullptr) {
  KeptConnection c;
  c.fd = fd;
  c.requests = requests;
  c.handler = std::make_shared<SocketHandler>(owner);
  EXPECT_TRUE(loop.add(fd, c.handler.get(), EPOLLIN | EPOLLOUT | EPOLLRDHUP));
  return c;
}

// One loop turn: what epoll reports now is dispatched.
void turn(core::EventLoop& loop) {
  loop.defer([&loop] { loop.stop(); });
  loop.run();
}

TEST(KeepalivePool, TakesOnlyLiveConnectionsOfThatPeer) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 4;
  KeepalivePool pool(loop, cfg);
  Pair a, b;
  pool.put(registered(loop, a.ours, 3), 0);
  pool.put(registered(loop, b.ours, 1), 1);
  turn(loop);  // the registrations' first edges find nothing to read
  EXPECT_EQ(pool.idle(), 2u);
  EXPECT_EQ(pool.take(2).fd, -1);
  // The server closes b: the next loop turn drops it, unasked.
  b.close_theirs();
  turn(loop);
  EXPECT_EQ(pool.idle(), 1u);
  EXPECT_EQ(pool.take(1).fd, -1);
  auto t = pool.take(0);
  EXPECT_EQ(t.fd, a.ours);
  EXPECT_EQ(t.requests, 3u);
  EXPECT_EQ(pool.idle(), 0u);
  close_connection(loop, t);
}

TEST(KeepalivePool, UnaskedBytesMakeAConnectionStale) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 1;
  KeepalivePool pool(loop, cfg);
  Pair a;
  pool.put(registered(loop, a.ours, 1), 0);
  turn(loop);
  EXPECT_EQ(pool.idle(), 1u);
  ASSERT_EQ(write(a.theirs, "x", 1), 1);
  turn(loop);
  EXPECT_EQ(pool.idle(), 0u);
}

// Within one loop turn the pool has not heard of a close yet: a plain take
// hands the connection out (the proxy sends the request again if it
// fails), a take with a peek does not.
TEST(KeepalivePool, PeekCatchesACloseNotYetReported) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 2;
  KeepalivePool pool(loop, cfg);
  Pair a, b;
  pool.put(registered(loop, a.ours, 1), 0);
  pool.put(registered(loop, b.ours, 1), 0);
  a.close_theirs();
  b.close_theirs();
  EXPECT_EQ(pool.take(0, true).fd, -1);
  EXPECT_EQ(pool.idle(), 0u);
}

TEST(KeepalivePool, HandsTheRegisteredHandlerOverWithTheConnection) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 1;
  KeepalivePool pool(loop, cfg);
  Pair a;
  Recorder request;
  pool.put(registered(loop, a.ours, 1), 0);
  turn(loop);
  auto t = pool.take(0);
  ASSERT_EQ(t.fd, a.ours);
  t.handler->set_owner(&request);
  // The answer to the next request reaches the new owner with no
  // re-registration.
  ASSERT_EQ(write(a.theirs, "y", 1), 1);
  turn(loop);
  EXPECT_EQ(request.calls, 1);
  EXPECT_TRUE(request.last & EPOLLIN);
  char c;
  ASSERT_EQ(read(t.fd, &c, 1), 1);
  // Back in the pool, the connection's events are the pool's again.
  pool.put(std::move(t), 0);
  a.close_theirs();
  turn(loop);
  EXPECT_EQ(request.calls, 1);
  EXPECT_EQ(pool.idle(), 0u);
}

// The peer's side of a connection we closed reads end of file.
bool closed_by_us(const Pair& p) {
  char c;
  return recv(p.theirs, &c, 1, MSG_DONTWAIT) == 0;
}

TEST(KeepalivePool, KeepsAtMostNOnceTheExcessHasLingered) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 2;
  KeepalivePool pool(loop, cfg);
  Pair p[3];
  const auto put_at = std::chrono::steady_clock::now();
  for (auto& x : p) pool.put(registered(loop, x.ours, 1), 0);
  EXPECT_EQ(pool.idle(), 3u);
  turn(loop);
  // Beyond the cap a connection stays a moment, for the load's next swing.
  EXPECT_EQ(pool.idle(), 3u);
  EXPECT_FALSE(closed_by_us(p[0]));
  const auto deadline = put_at + std::chrono::seconds(5);
  while (pool.idle() > 2 && std::chrono::steady_clock::now() < deadline) {
    turn(loop);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(pool.idle(), 2u);
  EXPECT_GE(std::chrono::steady_clock::now() - put_at, std::chrono::milliseconds(900));
  // The oldest went; the newest comes back first.
  EXPECT_TRUE(closed_by_us(p[0]));
  auto t = pool.take(0);
  EXPECT_EQ(t.fd, p[2].ours);
  close_connection(loop, t);
}

TEST(KeepalivePool, AConnectionOverTheCapServesARequestOfTheSameTurn) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 1;
  KeepalivePool pool(loop, cfg);
  Pair p[2];
  pool.put(registered(loop, p[0].ours, 1), 0);
  pool.put(registered(loop, p[1].ours, 1), 0);  // over the cap
  auto t = pool.take(0);                        // a request read in the same turn
  EXPECT_EQ(t.fd, p[1].ours);
  turn(loop);
  // Back at the cap: nothing was closed.
  EXPECT_EQ(pool.idle(), 1u);
  EXPECT_FALSE(closed_by_us(p[0]));
  EXPECT_FALSE(closed_by_us(p[1]));
  close_connection(loop, t);
}

TEST(KeepalivePool, RetiredPoolClosesIdleAndLaterConnections) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 4;
  KeepalivePool pool(loop, cfg);
  Pair idle, busy;
  auto busy_conn = registered(loop, busy.ours, 1);
  pool.put(registered(loop, idle.ours, 1), 0);
  pool.retire(nullptr);
  EXPECT_EQ(pool.idle(), 0u);
  EXPECT_TRUE(closed_by_us(idle));
  // A request that was still running puts its connection back: closed.
  pool.put(std::move(busy_conn), 0);
  EXPECT_EQ(pool.idle(), 0u);
  EXPECT_TRUE(closed_by_us(busy));
}

TEST(KeepalivePool, RetiredPoolHandsConnectionsToTheNextOne) {
  core::EventLoop loop;
  config::UpstreamGroupConfig cfg;
  cfg.keepalive = 4;
  KeepalivePool old_pool(loop, cfg);
  KeepalivePool next_pool(loop, cfg);
  Pair a, b, gone;
  auto b_conn = registered(loop, b.ours, 2);
  old_pool.put(registered(loop, a.ours, 5), 0);
  old_pool.put(registered(loop, gone.ours, 1), 1);
  auto forward = [&](KeptConnection& conn, int peer) {
    if (peer != 0) return false;  // the new config has no such server
    next_pool.put(std::move(conn), 3);
    return true;
  };
  old_pool.retire(forward);
  EXPECT_EQ(old_pool.idle(), 0u);
  EXPECT_EQ(next_pool.idle(), 1u);
  EXPECT_TRUE(closed_by_us(gone));
  old_pool.put(std::move(b_conn), 0);  // later, from a request on the old config
  EXPECT_EQ(next_pool.idle(), 2u);
  auto t = next_pool.take(3);
  EXPECT_EQ(t.fd, b.ours);
  EXPECT_EQ(t.requests, 2u);
  close_connection(loop, t);
  t = next_pool.take(3);
  EXPECT_EQ(t.fd, a.ours);
  EXPECT_EQ(t.requests, 5u);
  close_connection(loop, t);
}

}  // namespace
}  // namespace torii::upstream
