#include "http1/serializer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace torii::http1 {
namespace {

std::string head_of(const http::ResponseHead& head, SerializeOptions opts = {}) {
  std::string out;
  serialize_response_head(head, opts, out);
  return out;
}

TEST(Http1Serializer, StatusLineHeadersAndLength) {
  http::ResponseHead h;
  h.status = 200;
  h.add("Server", "torii");
  h.add("Content-Type", "text/html");
  h.content_length = 1234;
  EXPECT_EQ(head_of(h),
            "HTTP/1.1 200 OK\r\nServer: torii\r\nContent-Type: text/html\r\nContent-Length: 1234\r\n\r\n");
}

TEST(Http1Serializer, AppendsToExistingOutput) {
  http::ResponseHead h;
  h.status = 404;
  h.content_length = 0;
  std::string out = "previous";
  serialize_response_head(h, {}, out);
  EXPECT_EQ(out, "previousHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
}

TEST(Http1Serializer, ChunkedAndClose) {
  http::ResponseHead h;
  h.status = 502;
  SerializeOptions o;
  o.chunked = true;
  o.keep_alive = false;
  EXPECT_EQ(head_of(h, o), "HTTP/1.1 502 Bad Gateway\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
}

TEST(Http1Serializer, Http10KeepAlive) {
  http::ResponseHead h;
  h.content_length = 3;
  SerializeOptions o;
  o.version = 10;
  o.keep_alive = true;
  EXPECT_EQ(head_of(h, o), "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\n");
  o.keep_alive = false;
  EXPECT_EQ(head_of(h, o), "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n");
}

TEST(Http1Serializer, OwnFramingFieldsWin) {
  http::ResponseHead h;
  h.add("content-length", "999");
  h.add("Transfer-Encoding", "gzip");
  h.add("Connection", "upgrade");
  h.add("X-A", "1");
  h.content_length = 5;
  EXPECT_EQ(head_of(h), "HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 5\r\n\r\n");
}

TEST(Http1Serializer, HandlersContentLengthKeptWhenLengthUnknown) {
  http::ResponseHead h;
  h.add("Content-Length", "10");
  EXPECT_EQ(head_of(h), "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n");
}

TEST(Http1Serializer, NoBodyStatusesCarryNoFraming) {
  http::ResponseHead h;
  h.status = 204;
  h.content_length = 0;
  SerializeOptions o;
  o.chunked = true;
  EXPECT_EQ(head_of(h, o), "HTTP/1.1 204 No Content\r\n\r\n");
  h.status = 304;
  h.add("ETag", "\"x\"");
  h.add("Content-Length", "12");
  EXPECT_EQ(head_of(h), "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n");
}

TEST(Http1Serializer, SwitchingProtocolsKeepsConnection) {
  http::ResponseHead h;
  h.status = 101;
  h.add("Upgrade", "websocket");
  h.add("Connection", "Upgrade");
  EXPECT_EQ(head_of(h), "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
}

TEST(Http1Serializer, HeadResponseHasNoChunkedCoding) {
  http::ResponseHead h;
  SerializeOptions o;
  o.chunked = true;
  o.head_only = true;
  EXPECT_EQ(head_of(h, o), "HTTP/1.1 200 OK\r\n\r\n");
  h.content_length = 42;
  o.chunked = false;
  EXPECT_EQ(head_of(h, o), "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n");
}

TEST(Http1Serializer, FieldsThatWouldSplitTheResponseAreLeftOut) {
  http::ResponseHead h;
  h.add("X-Bad", "a\r\nSet-Cookie: evil=1");
  h.add("X-Bad2\n", "v");
  h.add("X-Nul", std::string("a\0b", 3));
  h.add("X-Good", "ok");
  EXPECT_EQ(head_of(h), "HTTP/1.1 200 OK\r\nX-Good: ok\r\n\r\n");
}

// The check looks at words, the last one overlapping: a bad byte is found
// at every position of names and values of every length around a word.
TEST(Http1Serializer, BadByteFoundAtEveryPosition) {
  for (size_t len = 1; len <= 25; ++len) {
    for (size_t at = 0; at < len; ++at) {
      for (char bad : {'\r', '\n', '\0'}) {
        std::string text(len, 'x');
        text[at] = bad;
        http::ResponseHead in_value;
        in_value.add("X-Value", text);
        in_value.add("X-Good", std::string(len, 'y'));
        EXPECT_EQ(head_of(in_value), "HTTP/1.1 200 OK\r\nX-Good: " + std::string(len, 'y') + "\r\n\r\n")
            << "value of " << len << " bytes, byte " << int(bad) << " at " << at;
        http::ResponseHead in_name;
        in_name.add(text, "v");
        EXPECT_EQ(head_of(in_name), "HTTP/1.1 200 OK\r\n\r\n") << "name of " << len << " bytes, bad at " << at;
      }
    }
  }
}

TEST(Http1Serializer, UnknownStatus) {
  http::ResponseHead h;
  h.status = 599;
  EXPECT_EQ(head_of(h), "HTTP/1.1 599 Unknown\r\n\r\n");
}

TEST(Http1Serializer, LargeLength) {
  http::ResponseHead h;
  h.content_length = INT64_MAX;
  EXPECT_EQ(head_of(h), "HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\n");
}

TEST(Http1Serializer, ChunkHeader) {
  std::string out;
  append_chunk_header(0, out);
  EXPECT_EQ(out, "0\r\n");
  out.clear();
  append_chunk_header(500, out);
  EXPECT_EQ(out, "1f4\r\n");
  out.clear();
  append_chunk_header(0xABCDEF, out);
  EXPECT_EQ(out, "abcdef\r\n");
  out.clear();
  append_chunk_header(SIZE_MAX, out);
  EXPECT_EQ(out, "ffffffffffffffff\r\n");
}

TEST(Http1Serializer, ReasonPhrases) {
  EXPECT_EQ(http::reason_phrase(200), "OK");
  EXPECT_EQ(http::reason_phrase(301), "Moved Permanently");
  EXPECT_EQ(http::reason_phrase(308), "Permanent Redirect");
  EXPECT_EQ(http::reason_phrase(413), "Content Too Large");
  EXPECT_EQ(http::reason_phrase(414), "URI Too Long");
  EXPECT_EQ(http::reason_phrase(429), "Too Many Requests");
  EXPECT_EQ(http::reason_phrase(431), "Request Header Fields Too Large");
  EXPECT_EQ(http::reason_phrase(451), "Unavailable For Legal Reasons");
  EXPECT_EQ(http::reason_phrase(505), "HTTP Version Not Supported");
  EXPECT_EQ(http::reason_phrase(299), "Unknown");
  EXPECT_EQ(http::reason_phrase(-1), "Unknown");
}

TEST(Http1Serializer, ResponseHeadLookups) {
  http::ResponseHead h;
  h.add("Content-Type", "a");
  h.add("X-Y", "1");
  h.add("x-y", "2");
  ASSERT_NE(h.find("content-type"), nullptr);
  EXPECT_EQ(*h.find("CONTENT-TYPE"), "a");
  EXPECT_EQ(*h.find("X-y"), "1");
  EXPECT_EQ(h.find("missing"), nullptr);
  h.remove("X-Y");
  EXPECT_EQ(h.find("x-y"), nullptr);
  EXPECT_EQ(h.headers.size(), 1u);
  h.set("content-type", "b");
  ASSERT_EQ(h.headers.size(), 1u);
  EXPECT_EQ(h.headers[0].second, "b");
}

TEST(Http1Serializer, OpenFileClosesItsDescriptor) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  {
    http::OpenFile f;
    f.fd = fds[0];
  }
  EXPECT_EQ(fcntl(fds[0], F_GETFD), -1);
  EXPECT_NE(fcntl(fds[1], F_GETFD), -1);
  close(fds[1]);
  http::OpenFile unopened;  // fd -1: nothing to close
}

TEST(Http1Serializer, LastChunkCarriesOnlySafeTrailers) {
  std::string out;
  append_last_chunk({{"grpc-status", "0"},
                     {"grpc-message", "fine"},
                     {"content-length", "5"},       // framing: never a trailer
                     {"Transfer-Encoding", "gzip"},  // framing, any case
                     {"x-bad", "a\r\nInjected: yes"},  // would break the framing
                     {"bad name", "x"}},
                    out);
  EXPECT_EQ(out, "0\r\ngrpc-status: 0\r\ngrpc-message: fine\r\n\r\n");
  out.clear();
  append_last_chunk({}, out);
  EXPECT_EQ(out, kLastChunk);
}

}  // namespace
}  // namespace torii::http1
