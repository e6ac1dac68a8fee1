#include "http1/output_queue.h"

#include "net/transport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace torii::http1 {
namespace {

// A file with known bytes, unlinked at once: only the descriptor remains.
std::shared_ptr<http::OpenFile> temp_file(const std::string& content) {
  char path[] = "/tmp/torii-oq-XXXXXX";
  int fd = mkstemp(path);
  unlink(path);
  EXPECT_EQ(write(fd, content.data(), content.size()), ssize_t(content.size()));
  auto f = std::make_shared<http::OpenFile>();
  f->fd = fd;
  f->size = int64_t(content.size());
  return f;
}

std::string read_all(int fd) {
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, size_t(n));
  }
  return out;
}

// A socket pair whose writing end sv[0] does not block and, when `sndbuf`
// is not 0, has that small a send buffer (so writes fill it quickly).
bool nonblocking_pair(int sv[2], int sndbuf) {
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return false;
  if (sndbuf > 0) setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  return fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0;
}

// What the peer has received so far, without waiting.
void take_received(int fd, std::string& got) {
  char buf[65536];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) got.append(buf, size_t(n));
}

// Flushes until the queue is done, reading the peer between tries (a
// non-blocking socket fills up). Returns the number of "again" results.
int flush_until_done(OutputQueue& q, net::Transport& t, bool sendfile, int peer, std::string& got) {
  for (int again = 0;; ++again) {
    const auto r = q.flush(t, sendfile);
    take_received(peer, got);
    if (r != OutputQueue::Result::again) {
      EXPECT_EQ(r, OutputQueue::Result::done);
      return again;
    }
    if (again > 1000000) {
      ADD_FAILURE() << "the queue never drained";
      return again;
    }
  }
}

class OutputQueueTest : public ::testing::TestWithParam<bool> {};

TEST_P(OutputQueueTest, MemoryAndFileRangesLeaveInOrder) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  std::string content;
  for (int i = 0; i < 5000; ++i) content += char('a' + i % 26);
  auto file = temp_file(content);

  OutputQueue q;
  q.append("head\r\n");
  q.append_file(file, 10, 100);
  q.append("|mid|");
  q.append_file(file, 0, int64_t(content.size()));
  q.append("tail");
  EXPECT_TRUE(q.has_file());
  {
    net::PlainTransport t(sv[0]);
    ASSERT_EQ(q.flush(t, GetParam()), OutputQueue::Result::done);
  }
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.has_file());
  std::string expect = "head\r\n" + content.substr(10, 100) + "|mid|" + content + "tail";
  EXPECT_EQ(read_all(sv[1]), expect);
  EXPECT_EQ(q.bytes_written(), expect.size());
  close(sv[1]);
}

// A full socket: flush says "again", keeps the rest, and finishes later.
TEST_P(OutputQueueTest, PartialWritesResume) {
  int sv[2];
  ASSERT_TRUE(nonblocking_pair(sv, 4096));
  std::string content(1 << 20, 'x');
  for (size_t i = 0; i < content.size(); i += 997) content[i] = char('0' + i % 10);
  auto file = temp_file(content);
  OutputQueue q;
  q.append("H");
  q.append_file(file, 0, int64_t(content.size()));
  std::string got;
  net::PlainTransport t(sv[0]);
  EXPECT_GT(flush_until_done(q, t, GetParam(), sv[1], got), 0);
  EXPECT_EQ(got, "H" + content);
  close(sv[1]);
}

INSTANTIATE_TEST_SUITE_P(SendfileOnOff, OutputQueueTest, ::testing::Bool());

// Without sendfile a big file at the very front is read into memory a
// chunk at a time, each chunk going out before the rest of the file.
TEST(OutputQueue, BigFileFirstIsReadInChunksInOrder) {
  int sv[2];
  ASSERT_TRUE(nonblocking_pair(sv, 0));
  std::string content(300 * 1024, 'x');
  for (size_t i = 0; i < content.size(); i += 991) content[i] = char('a' + i % 26);
  auto file = temp_file(content);
  OutputQueue q;
  q.append_file(file, 0, int64_t(content.size()));
  q.append("end");
  std::string got;
  net::PlainTransport t(sv[0]);
  flush_until_done(q, t, false, sv[1], got);
  EXPECT_EQ(got, content + "end");
  close(sv[1]);
}

// A head serialised in place joins the memory piece before it, and a
// writer that adds nothing leaves no empty piece behind.
TEST(OutputQueue, AppendWithWritesInPlace) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  OutputQueue q;
  EXPECT_EQ(q.append_with([](std::string&) {}), 0u);
  EXPECT_TRUE(q.empty());
  q.append("100 ");
  EXPECT_EQ(q.append_with([](std::string& out) { out += "head"; }), 4u);
  EXPECT_EQ(q.memory_bytes(), 8u);
  EXPECT_EQ(q.append_with([](std::string&) {}), 0u);
  {
    net::PlainTransport t(sv[0]);
    ASSERT_EQ(q.flush(t, true), OutputQueue::Result::done);
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.memory_bytes(), 0u);
  EXPECT_EQ(read_all(sv[1]), "100 head");
  close(sv[1]);
}

// A file whose bytes the open-file cache holds leaves from them unless it
// can go zero-copy by sendfile; the test gives the copy other bytes than
// the descriptor to see which was sent.
TEST(OutputQueue, CachedFileBytesAreSentWhenNotBySendfile) {
  for (bool sendfile : {false, true}) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    auto on_disk = temp_file("0123456789");
    auto file = std::make_shared<http::OpenFile>();
    file->fd = dup(on_disk->fd);
    file->size = 10;
    file->content = http::FileBytes::copy_of("abcdefghij");
    OutputQueue q;
    q.append("<");
    q.append_file(file, 2, 5);
    q.append(">");
    {
      net::PlainTransport t(sv[0]);
      ASSERT_EQ(q.flush(t, sendfile), OutputQueue::Result::done);
    }
    EXPECT_TRUE(q.empty());
    EXPECT_FALSE(q.has_file());
    EXPECT_EQ(q.bytes_written(), 7u);
    EXPECT_EQ(read_all(sv[1]), sendfile ? "<23456>" : "<cdefg>");
    close(sv[1]);
  }
}

// A stream whose queue never quite empties (a producer a little ahead of
// the socket): every byte leaves once and in order while spent slots are
// reclaimed along the way.
TEST(OutputQueue, NeverEmptyQueueKeepsOrder) {
  int sv[2];
  ASSERT_TRUE(nonblocking_pair(sv, 8192));
  net::PlainTransport t(sv[0]);
  OutputQueue q;
  std::string expect, got;
  for (int i = 0; i < 2000; ++i) {
    std::string piece(17 * 1024, char('a' + i % 26));  // above the merge limit: one piece each
    piece += std::to_string(i);
    expect += piece;
    q.append(piece);
    ASSERT_NE(q.flush(t, true), OutputQueue::Result::error);
    char buf[12 * 1024];  // a reader slower than the writer
    ssize_t n = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) got.append(buf, size_t(n));
  }
  EXPECT_FALSE(q.empty());
  flush_until_done(q, t, true, sv[1], got);
  EXPECT_EQ(q.memory_bytes(), 0u);
  EXPECT_EQ(got.size(), expect.size());
  EXPECT_TRUE(got == expect);
  close(sv[1]);
}

TEST(OutputQueue, ClosedPeerIsAnError) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  close(sv[1]);
  OutputQueue q;
  q.append("data");
  net::PlainTransport t(sv[0]);
  EXPECT_EQ(q.flush(t, true), OutputQueue::Result::error);
}

}  // namespace
}  // namespace torii::http1
