#include "load/h1_response_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace torii::load {
namespace {

using State = H1ResponseReader::State;

// Feeds `bytes` in pieces of `step`; returns how many bytes the response used.
size_t feed_in_pieces(H1ResponseReader& r, const std::string& bytes, size_t step) {
  size_t used = 0;
  while (used < bytes.size() && (r.state() == State::head || r.state() == State::body)) {
    size_t n = std::min(step, bytes.size() - used);
    size_t took = r.feed(bytes.data() + used, n);
    used += took;
    if (took < n) break;
  }
  return used;
}

TEST(LoadH1ResponseReader, ContentLengthInAnySplit) {
  std::string resp = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\nhello";
  std::string next = "HTTP/1.1 404 Not Found\r\n";
  for (size_t step = 1; step <= resp.size() + next.size(); ++step) {
    H1ResponseReader r;
    r.begin(false);
    size_t used = feed_in_pieces(r, resp + next, step);
    ASSERT_EQ(r.state(), State::done) << step;
    EXPECT_EQ(used, resp.size()) << step;
    EXPECT_EQ(r.status(), 200);
    EXPECT_TRUE(r.keep_alive());
  }
}

TEST(LoadH1ResponseReader, ChunkedWithExtensionsAndTrailersInAnySplit) {
  std::string resp =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=value\r\nhello\r\n"
      "A\r\n0123456789\r\n"
      "0\r\nTrailer: yes\r\n\r\n";
  for (size_t step = 1; step <= resp.size() + 4; ++step) {
    H1ResponseReader r;
    r.begin(false);
    size_t used = feed_in_pieces(r, resp + "HTTP", step);
    ASSERT_EQ(r.state(), State::done) << step;
    EXPECT_EQ(used, resp.size()) << step;
  }
}

TEST(LoadH1ResponseReader, NoBodyForHeadAnd204And304) {
  H1ResponseReader r;
  r.begin(true);
  std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
  EXPECT_EQ(r.feed(head.data(), head.size()), head.size());
  EXPECT_EQ(r.state(), State::done);
  for (const char* status : {"204 No Content", "304 Not Modified"}) {
    r.begin(false);
    std::string h = std::string("HTTP/1.1 ") + status + "\r\nContent-Length: 10\r\n\r\n";
    EXPECT_EQ(r.feed(h.data(), h.size()), h.size());
    EXPECT_EQ(r.state(), State::done) << status;
  }
}

TEST(LoadH1ResponseReader, InterimResponsesArePassedOver) {
  H1ResponseReader r;
  r.begin(false);
  std::string bytes = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                      "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
  EXPECT_EQ(r.feed(bytes.data(), bytes.size()), bytes.size());
  EXPECT_EQ(r.state(), State::done);
  EXPECT_EQ(r.status(), 201);
}

TEST(LoadH1ResponseReader, BodyUntilCloseEndsAtEof) {
  H1ResponseReader r;
  r.begin(false);
  std::string bytes = "HTTP/1.1 200 OK\r\n\r\nsome body";
  EXPECT_EQ(r.feed(bytes.data(), bytes.size()), bytes.size());
  EXPECT_EQ(r.state(), State::body);
  EXPECT_FALSE(r.keep_alive());
  r.on_eof();
  EXPECT_EQ(r.state(), State::done);
}

TEST(LoadH1ResponseReader, ConnectionCloseAndHttp10) {
  H1ResponseReader r;
  r.begin(false);
  std::string a = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
  r.feed(a.data(), a.size());
  EXPECT_EQ(r.state(), State::done);
  EXPECT_FALSE(r.keep_alive());
  r.begin(false);
  std::string b = "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
  r.feed(b.data(), b.size());
  EXPECT_FALSE(r.keep_alive());
  r.begin(false);
  std::string c = "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n";
  r.feed(c.data(), c.size());
  EXPECT_TRUE(r.keep_alive());
}

TEST(LoadH1ResponseReader, TruncatedResponseIsAnErrorAtEof) {
  H1ResponseReader r;
  r.begin(false);
  std::string bytes = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
  r.feed(bytes.data(), bytes.size());
  EXPECT_TRUE(r.started());
  r.on_eof();
  EXPECT_EQ(r.state(), State::error);
}

TEST(LoadH1ResponseReader, MalformedResponsesAreErrors) {
  for (const char* bad : {"HTTP/2.0 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 abc OK\r\n\r\n",
                          "garbage\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                          "HTTP/1.1 200 OK\r\n folded\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
                          "HTTP/1.1 101 Switching Protocols\r\n\r\n"}) {
    H1ResponseReader r;
    r.begin(false);
    r.feed(bad, std::strlen(bad));
    EXPECT_EQ(r.state(), State::error) << bad;
  }
}

TEST(LoadH1ResponseReader, HeadLargerThanTheLimitIsAnError) {
  H1ResponseReader r(64);
  r.begin(false);
  std::string head = "HTTP/1.1 200 OK\r\nX-Long: " + std::string(100, 'a');
  for (char c : head) r.feed(&c, 1);
  EXPECT_EQ(r.state(), State::error);
  // The same whole, with its end in sight: still too large.
  H1ResponseReader whole(64);
  whole.begin(false);
  std::string complete = head + "\r\n\r\n";
  whole.feed(complete.data(), complete.size());
  EXPECT_EQ(whole.state(), State::error);
}

}  // namespace
}  // namespace torii::load
