#include "http1/response_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace torii::http1 {
namespace {

ParseStatus parse_all(std::string_view text, ParsedResponse& r, size_t& consumed, ResponseParser* p = nullptr) {
  ResponseParser local;
  return (p ? *p : local).parse(text, r, consumed);
}

TEST(ResponseParser, SimpleHead) {
  std::string text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A:  b c \r\nConnection: keep-alive\r\n\r\nhello";
  ParsedResponse r;
  size_t consumed = 0;
  ASSERT_EQ(parse_all(text, r, consumed), ParseStatus::done);
  EXPECT_EQ(consumed, text.size() - 5);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.version, 11);
  EXPECT_EQ(r.reason, "OK");
  EXPECT_EQ(r.content_length, 5);
  ASSERT_EQ(r.headers.size(), 3u);
  EXPECT_EQ(r.headers[1].name, "X-A");
  EXPECT_EQ(r.headers[1].value, "b c");
  EXPECT_TRUE(r.keep_alive());
  EXPECT_EQ(response_framing(r, false), BodyFraming::length);
  EXPECT_EQ(response_framing(r, true), BodyFraming::none);
}

TEST(ResponseParser, IncrementalByteByByte) {
  std::string text = "HTTP/1.0 404 Not Found\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
  ResponseParser p;
  ParsedResponse r;
  size_t consumed = 0;
  for (size_t i = 1; i < text.size(); ++i) ASSERT_EQ(p.parse(text.substr(0, i), r, consumed), ParseStatus::need_more) << i;
  ASSERT_EQ(p.parse(text, r, consumed), ParseStatus::done);
  EXPECT_EQ(r.version, 10);
  EXPECT_TRUE(r.chunked);
  EXPECT_FALSE(r.keep_alive());  // HTTP/1.0 without keep-alive
  EXPECT_EQ(response_framing(r, false), BodyFraming::chunked);
}

TEST(ResponseParser, BareLfAndNoReason) {
  ParsedResponse r;
  size_t consumed = 0;
  ASSERT_EQ(parse_all("HTTP/1.1 204\nA: b\n\n", r, consumed), ParseStatus::done);
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(response_framing(r, false), BodyFraming::none);
}

TEST(ResponseParser, CloseDelimited) {
  ParsedResponse r;
  size_t consumed = 0;
  ASSERT_EQ(parse_all("HTTP/1.1 200 OK\r\n\r\n", r, consumed), ParseStatus::done);
  EXPECT_EQ(response_framing(r, false), BodyFraming::close);
  ASSERT_EQ(parse_all("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", r, consumed), ParseStatus::done);
  EXPECT_EQ(response_framing(r, false), BodyFraming::close);
  EXPECT_FALSE(r.keep_alive());
}

TEST(ResponseParser, Refusals) {
  const char* bad[] = {
      "HTTP/1.1 OK\r\n\r\n",
      "HTTP/2.0 200 OK\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",
      "HTTP/1.1 099 Low\r\n\r\n",
      "ICY 200 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nBroken\r\n\r\n",
      "HTTP/1.1 200 OK\r\nA : b\r\n\r\n",
      "HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
      "HTTP/1.1 200 OK\r\nA: b\x01\r\n\r\n",
  };
  for (const char* text : bad) {
    ParsedResponse r;
    size_t consumed = 0;
    EXPECT_EQ(parse_all(text, r, consumed), ParseStatus::error) << text;
  }
}

TEST(ResponseParser, EqualContentLengthsAccepted) {
  ParsedResponse r;
  size_t consumed = 0;
  ASSERT_EQ(parse_all("HTTP/1.1 200 OK\r\nContent-Length: 7, 7\r\n\r\n", r, consumed), ParseStatus::done);
  EXPECT_EQ(r.content_length, 7);
}

TEST(ResponseParser, TooBigHead) {
  ResponseParser p(64);
  ParsedResponse r;
  size_t consumed = 0;
  std::string text = "HTTP/1.1 200 OK\r\nX: " + std::string(100, 'a');
  EXPECT_EQ(p.parse(text, r, consumed), ParseStatus::error);
  EXPECT_STREQ(p.error(), "upstream sent too big header");
}

TEST(ResponseParser, UpgradeAndConnectionTokens) {
  ParsedResponse r;
  size_t consumed = 0;
  ASSERT_EQ(parse_all("HTTP/1.1 101 Switching\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\n\r\n", r, consumed),
            ParseStatus::done);
  EXPECT_TRUE(r.conn_upgrade);
  EXPECT_TRUE(r.conn_close);
  EXPECT_FALSE(r.keep_alive());
}

}  // namespace
}  // namespace torii::http1
