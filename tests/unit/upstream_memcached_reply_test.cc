#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "upstream/memcached/key.h"
#include "upstream/memcached/reply.h"

namespace torii::upstream::memcached {
namespace {

TEST(MemcachedKey, EscapesControlsSpaceAndPercentLikeNginx) {
  std::string out, escaped;
  append_get("/a b%c\r\n\x7f\xc3\xa9~", out, escaped);
  EXPECT_EQ(escaped, "/a%20b%25c%0D%0A\x7f\xc3\xa9~");
  EXPECT_EQ(out, "get " + escaped + "\r\n");
}

LineStatus parse(std::string_view in, bool flags, ReplyLine& line, std::string& error) {
  return parse_reply_line(in, "k%20y", flags, line, error);
}

TEST(MemcachedReply, ValueLine) {
  ReplyLine line;
  std::string error;
  ASSERT_EQ(parse("VALUE k%20y 3 12\r\nhello", true, line, error), LineStatus::done);
  EXPECT_EQ(line.kind, ReplyLine::Kind::value);
  EXPECT_EQ(line.flags, 3u);
  EXPECT_EQ(line.length, 12);
  EXPECT_EQ(line.size, 18u);
}

TEST(MemcachedReply, MissAndPartialLine) {
  ReplyLine line;
  std::string error;
  EXPECT_EQ(parse("VALUE k%20y 0", false, line, error), LineStatus::need_more);
  ASSERT_EQ(parse("END\r\n", false, line, error), LineStatus::done);
  EXPECT_EQ(line.kind, ReplyLine::Kind::miss);
  EXPECT_EQ(line.size, 5u);
}

TEST(MemcachedReply, NginxWordsForBadLines) {
  ReplyLine line;
  std::string error;
  EXPECT_EQ(parse("VALUE other 0 1\r\n", false, line, error), LineStatus::error);
  EXPECT_EQ(error, "memcached sent invalid key in response \"VALUE other 0 1\" for key \"k%20y\"");
  EXPECT_EQ(parse("VALUE k%20y x 1\r\n", true, line, error), LineStatus::error);
  EXPECT_EQ(error, "memcached sent invalid flags in response \"VALUE k%20y x 1\" for key \"k%20y\"");
  // Flags are only read when memcached_gzip_flag asks for them.
  EXPECT_EQ(parse("VALUE k%20y x 1\r\n", false, line, error), LineStatus::done);
  EXPECT_EQ(parse("VALUE k%20y 0 1 77\r\n", false, line, error), LineStatus::error);
  EXPECT_EQ(error, "memcached sent invalid length in response \"VALUE k%20y 0 1 77\" for key \"k%20y\"");
  EXPECT_EQ(parse("SERVER_ERROR out of memory\r\n", false, line, error), LineStatus::error);
  EXPECT_EQ(error, "memcached sent invalid response: \"SERVER_ERROR out of memory\"");
  EXPECT_EQ(parse("END\n", false, line, error), LineStatus::error);
  EXPECT_EQ(error, "memcached sent invalid response: \"END\"");
  EXPECT_EQ(parse("VALUE k%20y 5\r\n", false, line, error), LineStatus::error);
  EXPECT_EQ(error, "memcached sent invalid response: \"VALUE k%20y 5\"");
}

TEST(MemcachedReply, ValueThenTrailerInPieces) {
  ValueReader r(5);
  std::string_view v;
  EXPECT_EQ(r.feed("hel", v), ValueReader::Status::more);
  EXPECT_EQ(v, "hel");
  EXPECT_EQ(r.feed("lo\r\nE", v), ValueReader::Status::more);
  EXPECT_EQ(v, "lo");
  EXPECT_EQ(r.feed("ND\r\n", v), ValueReader::Status::done);
  EXPECT_TRUE(v.empty());
}

TEST(MemcachedReply, BadTrailerAfterTheValue) {
  ValueReader longer(3);
  std::string_view v;
  EXPECT_EQ(longer.feed("abcdef\r\nEND\r\n", v), ValueReader::Status::bad_trailer);
  EXPECT_EQ(v, "abc");
  ValueReader extra(1);
  EXPECT_EQ(extra.feed("x\r\nEND\r\nmore", v), ValueReader::Status::bad_trailer);
  ValueReader exact(0);
  EXPECT_EQ(exact.feed("\r\nEND\r\n", v), ValueReader::Status::done);
}

}  // namespace
}  // namespace torii::upstream::memcached
