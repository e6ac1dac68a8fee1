#include "stream/datagram_queue.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace torii::stream {
namespace {

// A datagram socket pair whose sending side has the smallest send buffer
// the kernel allows: a few datagrams fill it until the other side reads.
class TinyPair {
 public:
  TinyPair() {
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, fds_), 0);
    int size = 1;
    setsockopt(fds_[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  }
  ~TinyPair() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  DatagramQueue::Send sender() {
    return [this](std::string_view d) { return ::send(fds_[0], d.data(), d.size(), 0); };
  }
  // Sends datagrams of `size` straight to the socket until it refuses one.
  int fill(size_t size) {
    const std::string d(size, 'f');
    int n = 0;
    while (::send(fds_[0], d.data(), d.size(), 0) >= 0) ++n;
    EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK) << errno;
    return n;
  }
  // Everything the receiving side holds, a datagram an entry.
  std::vector<std::string> drain() {
    std::vector<std::string> got;
    char buf[65536];
    for (;;) {
      const ssize_t n = ::recv(fds_[1], buf, sizeof buf, 0);
      if (n < 0) break;
      got.emplace_back(buf, size_t(n));
    }
    return got;
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST(StreamDatagramQueue, SendsAtOnceWhileTheSocketTakesThem) {
  TinyPair p;
  DatagramQueue q(1024);
  EXPECT_EQ(q.push("one", p.sender()), DatagramQueue::Outcome::sent);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(p.drain(), std::vector<std::string>{"one"});
}

TEST(StreamDatagramQueue, FullSendBufferKeepsDatagramsInOrderUntilWritable) {
  TinyPair p;
  const int filled = p.fill(512);
  ASSERT_GT(filled, 0);
  DatagramQueue q(1024);
  EXPECT_EQ(q.push("a", p.sender()), DatagramQueue::Outcome::waiting);
  EXPECT_EQ(q.push("bb", p.sender()), DatagramQueue::Outcome::waiting);
  EXPECT_EQ(q.bytes(), 3u);
  // Still full: nothing moves, nothing is lost.
  EXPECT_EQ(q.flush(p.sender()), DatagramQueue::Outcome::waiting);
  EXPECT_EQ(q.bytes(), 3u);
  // The reader takes what filled the buffer; the queue follows, in order.
  EXPECT_EQ(p.drain().size(), size_t(filled));
  EXPECT_EQ(q.flush(p.sender()), DatagramQueue::Outcome::sent);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(p.drain(), (std::vector<std::string>{"a", "bb"}));
}

TEST(StreamDatagramQueue, LaterDatagramWaitsBehindEarlierOnes) {
  TinyPair p;
  p.fill(512);
  DatagramQueue q(1024);
  ASSERT_EQ(q.push("first", p.sender()), DatagramQueue::Outcome::waiting);
  p.drain();
  // The socket could take this one now, but "first" goes before it.
  EXPECT_EQ(q.push("second", p.sender()), DatagramQueue::Outcome::waiting);
  EXPECT_EQ(q.flush(p.sender()), DatagramQueue::Outcome::sent);
  EXPECT_EQ(p.drain(), (std::vector<std::string>{"first", "second"}));
}

TEST(StreamDatagramQueue, BeyondCapacityIsDropped) {
  TinyPair p;
  p.fill(512);
  DatagramQueue q(10);
  EXPECT_EQ(q.push("123456", p.sender()), DatagramQueue::Outcome::waiting);
  EXPECT_EQ(q.push("7890", p.sender()), DatagramQueue::Outcome::waiting);  // exactly full
  EXPECT_EQ(q.push("x", p.sender()), DatagramQueue::Outcome::dropped);
  EXPECT_EQ(q.bytes(), 10u);
  p.drain();
  EXPECT_EQ(q.flush(p.sender()), DatagramQueue::Outcome::sent);
  EXPECT_EQ(p.drain(), (std::vector<std::string>{"123456", "7890"}));
  // Room again.
  EXPECT_EQ(q.push("y", p.sender()), DatagramQueue::Outcome::sent);
}

TEST(StreamDatagramQueue, OtherErrorsFail) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, fds), 0);
  ::close(fds[1]);  // nobody reads: ECONNREFUSED
  DatagramQueue q(1024);
  const DatagramQueue::Send send = [&](std::string_view d) { return ::send(fds[0], d.data(), d.size(), MSG_NOSIGNAL); };
  EXPECT_EQ(q.push("lost", send), DatagramQueue::Outcome::failed);
  EXPECT_TRUE(q.empty());
  ::close(fds[0]);
}

}  // namespace
}  // namespace torii::stream
