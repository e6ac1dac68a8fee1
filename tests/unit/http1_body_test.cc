#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http1/parser.h"

namespace torii::http1 {
namespace {

using Status = BodyDecoder::Status;

struct Decoded {
  Status status = Status::need_more;
  std::string body;
  size_t consumed = 0;  // total, over all calls
  std::string error;
};

// Feeds `pieces` in order; each call sees only what the previous calls left
// unconsumed plus the next piece, as a connection's read buffer would.
Decoded feed(BodyDecoder& d, const std::vector<std::string>& pieces) {
  Decoded r;
  std::string pending;
  for (const std::string& piece : pieces) {
    pending += piece;
    size_t used = 0;
    r.status = d.decode(pending, used, [&](std::string_view data) { r.body.append(data); });
    EXPECT_LE(used, pending.size());
    r.consumed += used;
    pending.erase(0, used);
    if (r.status != Status::need_more) break;
  }
  r.error = d.error();
  return r;
}

Decoded chunked(const std::string& in) {
  BodyDecoder d;
  d.start_chunked();
  return feed(d, {in});
}

TEST(Http1Body, ContentLengthPassesExactlyN) {
  BodyDecoder d;
  d.start_length(5);
  std::vector<std::string_view> views;
  size_t used = 0;
  const std::string in = "hel";
  EXPECT_EQ(d.decode(in, used, [&](std::string_view v) { views.push_back(v); }), Status::need_more);
  EXPECT_EQ(used, 3u);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].data(), in.data());  // a view, not a copy
  EXPECT_EQ(d.remaining(), 2);
  const std::string more = "loGET / HTTP/1.1";
  views.clear();
  EXPECT_EQ(d.decode(more, used, [&](std::string_view v) { views.push_back(v); }), Status::done);
  EXPECT_EQ(used, 2u);  // the next request stays in the buffer
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0], "lo");
  EXPECT_EQ(d.remaining(), 0);
  // Done stays done and reads nothing more.
  EXPECT_EQ(d.decode(more, used, [&](std::string_view) { ADD_FAILURE(); }), Status::done);
  EXPECT_EQ(used, 0u);
}

TEST(Http1Body, ZeroLengthIsDoneAtOnce) {
  BodyDecoder d;
  d.start_length(0);
  size_t used = 7;
  EXPECT_EQ(d.decode("abc", used, [](std::string_view) { ADD_FAILURE(); }), Status::done);
  EXPECT_EQ(used, 0u);
  EXPECT_EQ(d.decode("", used, [](std::string_view) { ADD_FAILURE(); }), Status::done);
}

TEST(Http1Body, ChunkedBasic) {
  const std::string in = "5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\nNEXT";
  Decoded r = chunked(in);
  EXPECT_EQ(r.status, Status::done);
  EXPECT_EQ(r.body, "hello, world");
  EXPECT_EQ(r.consumed, in.size() - 4);
}

TEST(Http1Body, ChunkedHexSizesAndExtensions) {
  const std::string data(0x1A, 'x');
  Decoded r = chunked("1a;name=value;q=\"quoted\"\r\n" + data + "\r\n0000 ; last\r\n\r\n");
  EXPECT_EQ(r.status, Status::done) << r.error;
  EXPECT_EQ(r.body, data);
  r = chunked("A\r\n0123456789\r\n0\r\n\r\n");
  EXPECT_EQ(r.status, Status::done);
  EXPECT_EQ(r.body, "0123456789");
}

TEST(Http1Body, ChunkedTrailersAreDropped) {
  const std::string in = "3\r\nabc\r\n0\r\nExpires: never\r\nX-Sum: 1\r\n\r\nrest";
  Decoded r = chunked(in);
  EXPECT_EQ(r.status, Status::done);
  EXPECT_EQ(r.body, "abc");
  EXPECT_EQ(r.consumed, in.size() - 4);
}

TEST(Http1Body, ChunkedBareLfIsTolerated) {
  const std::string in = "3\nabc\n0\nT: v\n\n";
  Decoded r = chunked(in);
  EXPECT_EQ(r.status, Status::done) << r.error;
  EXPECT_EQ(r.body, "abc");
  EXPECT_EQ(r.consumed, in.size());
}

TEST(Http1Body, ChunkedSplitAtEveryByte) {
  const std::string in =
      "4;e=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n";
  const std::string want = "Wikipedia in\r\n\r\nchunks.";
  for (size_t cut = 0; cut <= in.size(); ++cut) {
    BodyDecoder d;
    d.start_chunked();
    Decoded r = feed(d, {in.substr(0, cut), in.substr(cut)});
    EXPECT_EQ(r.status, Status::done) << cut;
    EXPECT_EQ(r.body, want) << cut;
    EXPECT_EQ(r.consumed, in.size()) << cut;
  }
  std::vector<std::string> bytes;
  for (char c : in) bytes.emplace_back(1, c);
  BodyDecoder d;
  d.start_chunked();
  Decoded r = feed(d, bytes);
  EXPECT_EQ(r.status, Status::done);
  EXPECT_EQ(r.body, want);
  EXPECT_EQ(r.consumed, in.size());
}

TEST(Http1Body, ContentLengthSplitAtEveryByte) {
  const std::string in = "0123456789";
  for (size_t cut = 0; cut <= in.size(); ++cut) {
    BodyDecoder d;
    d.start_length(8);
    Decoded r = feed(d, {in.substr(0, cut), in.substr(cut)});
    EXPECT_EQ(r.status, Status::done);
    EXPECT_EQ(r.body, "01234567");
    EXPECT_EQ(r.consumed, 8u);
  }
}

TEST(Http1Body, ChunkedIncompleteNeedsMore) {
  Decoded r = chunked("5\r\nhel");
  EXPECT_EQ(r.status, Status::need_more);
  EXPECT_EQ(r.body, "hel");
  r = chunked("5\r\nhello\r\n0\r\n");
  EXPECT_EQ(r.status, Status::need_more);
}

TEST(Http1Body, ChunkedErrors) {
  const char* bad[] = {
      "\r\n",                       // no size
      "x\r\n",                      // not hex
      "-1\r\n",                     // sign
      "5\rhello",                   // bare CR after size
      "5\r\nhelloX\r\n",            // data longer than its size
      "5\r\nhello\rX",              // CR without LF after data
      "8000000000000000\r\n",       // 2^63: overflows int64
      "ffffffffffffffffff\r\n",     // far too large
      "5;a\x01\r\nhello\r\n",       // control in extension
      "0\r\nT: v\rX",               // bare CR in trailer
      "0\r\nT: \x01\r\n\r\n",       // control in trailer
      "0\r\n\rX",                   // bare CR on the final line
  };
  for (const char* in : bad) {
    Decoded r = chunked(in);
    EXPECT_EQ(r.status, Status::error) << in;
    EXPECT_FALSE(r.error.empty()) << in;
  }
}

TEST(Http1Body, LargestChunkSizeIsAccepted) {
  BodyDecoder d;
  d.start_chunked();
  size_t used = 0;
  EXPECT_EQ(d.decode("7fffffffffffffff\r\nab", used, [](std::string_view) {}), Status::need_more);
  EXPECT_EQ(d.remaining(), INT64_MAX - 2);
}

TEST(Http1Body, ChunkExtensionIsBounded) {
  EXPECT_EQ(chunked("1;" + std::string(4000, 'e') + "\r\nx\r\n0\r\n\r\n").status, Status::done);
  Decoded r = chunked("1;" + std::string(5000, 'e') + "\r\nx\r\n0\r\n\r\n");
  EXPECT_EQ(r.status, Status::error);
  // Also when the extension arrives a byte at a time.
  std::vector<std::string> bytes;
  for (char c : "1;" + std::string(5000, 'e')) bytes.emplace_back(1, c);
  BodyDecoder d;
  d.start_chunked();
  EXPECT_EQ(feed(d, bytes).status, Status::error);
}

TEST(Http1Body, TrailerSectionIsBounded) {
  std::string trailers;
  for (int i = 0; i < 100; ++i) trailers += "X-T: " + std::string(100, 'v') + "\r\n";  // ~10 KiB
  EXPECT_EQ(chunked("0\r\n" + trailers + "\r\n").status, Status::done);
  std::string big;
  for (int i = 0; i < 400; ++i) big += "X-T: " + std::string(100, 'v') + "\r\n";  // ~42 KiB
  EXPECT_EQ(chunked("0\r\n" + big + "\r\n").status, Status::error);
}

TEST(Http1Body, ErrorIsSticky) {
  BodyDecoder d;
  d.start_chunked();
  size_t used = 0;
  EXPECT_EQ(d.decode("zz", used, [](std::string_view) {}), Status::error);
  EXPECT_EQ(d.decode("1\r\na\r\n0\r\n\r\n", used, [](std::string_view) {}), Status::error);
  d.start_chunked();  // restarting clears it
  EXPECT_EQ(d.decode("1\r\na\r\n0\r\n\r\n", used, [](std::string_view) {}), Status::done);
}

}  // namespace
}  // namespace torii::http1
