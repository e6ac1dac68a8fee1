#include "http1/parser.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace torii::http1 {
namespace {

using namespace std::string_literals;
using http::HeaderToken;
using http::Method;

// Runs a parser over `input` and keeps the bytes its views point into.
struct Outcome {
  ParseStatus status = ParseStatus::need_more;
  ParseError error;
  http::RequestHead head;
  size_t consumed = 0;
  std::unique_ptr<std::string> buf;  // stable address for the views
};

Outcome parse_whole(std::string_view input, const ParserLimits& limits = {}) {
  Outcome r;
  r.buf = std::make_unique<std::string>(input);
  RequestParser p(limits);
  r.status = p.parse(*r.buf, r.head, r.consumed);
  r.error = p.error();
  return r;
}

// Feeds one more byte per call, each time from a freshly allocated copy, so
// a parser that kept a pointer into an old buffer trips ASan.
Outcome parse_bytewise(std::string_view input, const ParserLimits& limits = {}) {
  Outcome r;
  RequestParser p(limits);
  for (size_t i = 1; i <= input.size(); ++i) {
    r.buf = std::make_unique<std::string>(input.substr(0, i));
    r.status = p.parse(*r.buf, r.head, r.consumed);
    if (r.status != ParseStatus::need_more) break;
  }
  r.error = p.error();
  return r;
}

// Both ways of feeding must agree; returns the whole-input run.
Outcome parse(std::string_view input, const ParserLimits& limits = {}) {
  Outcome whole = parse_whole(input, limits);
  Outcome bytes = parse_bytewise(input, limits);
  EXPECT_EQ(whole.status, bytes.status) << input;
  if (whole.status == ParseStatus::error && bytes.status == ParseStatus::error) {
    EXPECT_EQ(whole.error.status, bytes.error.status) << input;
    EXPECT_STREQ(whole.error.reason, bytes.error.reason) << input;
  }
  if (whole.status == ParseStatus::done && bytes.status == ParseStatus::done) {
    EXPECT_EQ(whole.consumed, bytes.consumed);
    EXPECT_EQ(whole.head.target, bytes.head.target);
    EXPECT_EQ(whole.head.path, bytes.head.path);
    EXPECT_EQ(whole.head.host, bytes.head.host);
    EXPECT_EQ(whole.head.headers.size(), bytes.head.headers.size());
    for (size_t i = 0; i < whole.head.headers.size() && i < bytes.head.headers.size(); ++i) {
      EXPECT_EQ(whole.head.headers[i].name, bytes.head.headers[i].name);
      EXPECT_EQ(whole.head.headers[i].value, bytes.head.headers[i].value);
    }
  }
  return whole;
}

// Expects a refusal with `status`.
void expect_refused(std::string_view input, int status, const ParserLimits& limits = {}) {
  Outcome r = parse(input, limits);
  ASSERT_EQ(r.status, ParseStatus::error) << input;
  EXPECT_EQ(r.error.status, status) << input << " reason: " << r.error.reason;
  EXPECT_STRNE(r.error.reason, "") << input;
}

Outcome expect_done(std::string_view input, const ParserLimits& limits = {}) {
  Outcome r = parse(input, limits);
  EXPECT_EQ(r.status, ParseStatus::done) << input << " reason: " << r.error.reason;
  return r;
}

// ---- the request line ----

TEST(Http1Parser, SimpleGet) {
  const std::string in =
      "GET /a/b%20c?x=1&y=2 HTTP/1.1\r\nHost: Example.COM:8080\r\nUser-Agent: t\r\nAccept: */*\r\n\r\n";
  Outcome r = expect_done(in);
  EXPECT_EQ(r.consumed, in.size());
  EXPECT_EQ(r.head.method, Method::get);
  EXPECT_EQ(r.head.method_name, "GET");
  EXPECT_EQ(r.head.target, "/a/b%20c?x=1&y=2");
  EXPECT_EQ(r.head.raw_path, "/a/b%20c");
  EXPECT_EQ(r.head.path, "/a/b c");
  EXPECT_TRUE(r.head.has_query);
  EXPECT_EQ(r.head.query, "x=1&y=2");
  EXPECT_EQ(r.head.host, "example.com");
  EXPECT_EQ(r.head.version, 11);
  EXPECT_TRUE(r.head.keep_alive);
  EXPECT_FALSE(r.head.chunked);
  EXPECT_EQ(r.head.content_length, -1);
  ASSERT_EQ(r.head.headers.size(), 3u);
  EXPECT_EQ(r.head.headers[0].name, "Host");
  EXPECT_EQ(r.head.headers[0].value, "Example.COM:8080");
  EXPECT_EQ(r.head.headers[0].token, HeaderToken::host);
  EXPECT_EQ(r.head.headers[1].token, HeaderToken::user_agent);
  EXPECT_EQ(r.head.headers[2].token, HeaderToken::none);
  EXPECT_EQ(r.head.headers[2].value, "*/*");
  // The views point into the caller's buffer: zero-copy.
  EXPECT_GE(r.head.headers[2].value.data(), r.buf->data());
  EXPECT_LT(r.head.headers[2].value.data(), r.buf->data() + r.buf->size());
  ASSERT_NE(r.head.find("user-agent"), nullptr);
  EXPECT_EQ(r.head.find("USER-AGENT")->value, "t");
  ASSERT_NE(r.head.find("accept"), nullptr);
  EXPECT_EQ(r.head.find("x-missing"), nullptr);
}

TEST(Http1Parser, EmptyQueryAndNoQuery) {
  Outcome r = expect_done("GET /p? HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_TRUE(r.head.has_query);
  EXPECT_EQ(r.head.query, "");
  r = expect_done("GET /p HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_FALSE(r.head.has_query);
  EXPECT_EQ(r.head.raw_path, "/p");
}

TEST(Http1Parser, FragmentIsDropped) {
  Outcome r = expect_done("GET /p?a=1#frag HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.head.raw_path, "/p");
  EXPECT_EQ(r.head.query, "a=1");
  r = expect_done("GET /p#f?x HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.head.raw_path, "/p");
  EXPECT_FALSE(r.head.has_query);
}

TEST(Http1Parser, MethodsAreParsed) {
  Outcome r = expect_done("DELETE /x HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.head.method, Method::del);
  r = expect_done("BREW /pot HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.head.method, Method::unknown);
  EXPECT_EQ(r.head.method_name, "BREW");
}

TEST(Http1Parser, LeadingEmptyLinesAreSkipped) {
  const std::string in = "\r\n\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n";
  Outcome r = expect_done(in);
  EXPECT_EQ(r.consumed, in.size());
  EXPECT_EQ(r.head.method_name, "GET");
}

TEST(Http1Parser, BareLfLineEndsAreAccepted) {
  const std::string in = "GET /x HTTP/1.1\nHost: h\nA: b \n\n";
  Outcome r = expect_done(in);
  EXPECT_EQ(r.consumed, in.size());
  ASSERT_EQ(r.head.headers.size(), 2u);
  EXPECT_EQ(r.head.headers[1].value, "b");
}

TEST(Http1Parser, BareCrIsRefused) {
  expect_refused("\rGET / HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\rHost: h\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\n\rX", 400);
}

TEST(Http1Parser, BadMethodIsRefused) {
  expect_refused("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused(" / HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET\r\n\r\n", 400);
  expect_refused("GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", 400);
}

TEST(Http1Parser, SpacingInRequestLineIsStrict) {
  expect_refused("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET /  HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400);
}

TEST(Http1Parser, Http09IsRefused) {
  expect_refused("GET /\r\n\r\n", 400);
  expect_refused("GET / HTTP/0.9\r\n\r\n", 400);
}

TEST(Http1Parser, Versions) {
  Outcome r = expect_done("GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r.head.version, 10);
  r = expect_done("GET / HTTP/1.2\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.head.version, 11);
  expect_refused("GET / HTTP/2.0\r\n\r\n", 505);
  expect_refused("GET / HTTP/3.0\r\n\r\n", 505);
  expect_refused("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505);
  expect_refused("GET / http/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET / HTTP/1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET / HTTP/11.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.x\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET / FOO\r\nHost: h\r\n\r\n", 400);
}

TEST(Http1Parser, BadTargetBytesAreRefused) {
  expect_refused(std::string("GET /a\x01 HTTP/1.1\r\nHost: h\r\n\r\n"), 400);
  expect_refused(std::string("GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n"), 400);
  expect_refused("GET /a\0b HTTP/1.1\r\nHost: h\r\n\r\n"s, 400);
  expect_refused("GET a/b HTTP/1.1\r\nHost: h\r\n\r\n", 400);
}

TEST(Http1Parser, ObsTextInTargetIsAccepted) {
  Outcome r = expect_done("GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.head.path, "/caf\xc3\xa9");
}

TEST(Http1Parser, AbsoluteForm) {
  Outcome r = expect_done("GET http://Example.org:81/a/../b?q=1 HTTP/1.1\r\nHost: other\r\n\r\n");
  EXPECT_EQ(r.head.host, "example.org");  // the target wins over Host
  EXPECT_EQ(r.head.raw_path, "/a/../b");
  EXPECT_EQ(r.head.path, "/b");
  EXPECT_EQ(r.head.query, "q=1");
  EXPECT_EQ(r.head.target, "/a/../b?q=1");
  r = expect_done("GET http://example.org HTTP/1.1\r\nHost: example.org\r\n\r\n");
  EXPECT_EQ(r.head.raw_path, "/");
  EXPECT_EQ(r.head.path, "/");
  EXPECT_EQ(r.head.target, "/");
  r = expect_done("GET HTTPS://[::1]:8443/x HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r.head.host, "[::1]");
  EXPECT_EQ(r.head.path, "/x");
}

TEST(Http1Parser, BadAbsoluteFormIsRefused) {
  expect_refused("GET http:/x HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET http:///x HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET http://user@h/x HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET 1ttp://h/x HTTP/1.1\r\nHost: h\r\n\r\n", 400);
}

TEST(Http1Parser, AsteriskFormOnlyWithOptions) {
  Outcome r = expect_done("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.head.method, Method::options);
  EXPECT_EQ(r.head.target, "*");
  EXPECT_EQ(r.head.path, "*");
  expect_refused("GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400);
}

TEST(Http1Parser, AuthorityFormOnlyWithConnect) {
  Outcome r = expect_done("CONNECT Example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
  EXPECT_EQ(r.head.method, Method::connect);
  EXPECT_EQ(r.head.host, "example.com");
  EXPECT_EQ(r.head.target, "Example.com:443");
  EXPECT_TRUE(r.head.path.empty());
  expect_refused("GET example.com:443 HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("CONNECT /x HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("CONNECT example.com HTTP/1.1\r\nHost: h\r\n\r\n", 400);  // port required
}

TEST(Http1Parser, BadPathIsRefused) {
  expect_refused("GET /../etc/passwd HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET /a/%2e%2e/%2E%2E/x HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET /a%00 HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n", 400);
}

TEST(Http1Parser, PathIsNormalised) {
  Outcome r = expect_done("GET //a/./b//c/../d HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.head.raw_path, "//a/./b//c/../d");
  EXPECT_EQ(r.head.path, "/a/b/d");
}

// ---- limits ----

TEST(Http1Parser, RequestLineLimit) {
  ParserLimits lim;
  lim.max_request_line = 64;
  std::string line = "GET /" + std::string(64 - 14, 'a') + " HTTP/1.1";  // 64 bytes
  ASSERT_EQ(line.size(), 64u);
  expect_done(line + "\r\nHost: h\r\n\r\n", lim);
  expect_done(line + "\nHost: h\r\n\r\n", lim);
  std::string longer = "GET /" + std::string(64 - 13, 'a') + " HTTP/1.1";
  expect_refused(longer + "\r\nHost: h\r\n\r\n", 414, lim);
  // Refused as soon as the 65th byte arrives, without waiting for the end.
  Outcome r = parse_whole(longer.substr(0, 65), lim);
  EXPECT_EQ(r.status, ParseStatus::error);
  EXPECT_EQ(r.error.status, 414);
  r = parse_whole(longer.substr(0, 64), lim);
  EXPECT_EQ(r.status, ParseStatus::need_more);
}

TEST(Http1Parser, LeadingEmptyLinesDoNotCountInRequestLine) {
  ParserLimits lim;
  lim.max_request_line = 16;
  expect_done("\r\n\r\nGET / HTTP/1.0\r\n\r\n", lim);  // 14-byte line
}

TEST(Http1Parser, HeaderLineLimit) {
  ParserLimits lim;
  lim.max_header_line = 32;
  const std::string ok = "X-Long: " + std::string(32 - 8, 'v');  // 32 bytes
  ASSERT_EQ(ok.size(), 32u);
  Outcome r = expect_done("GET / HTTP/1.1\r\nHost: h\r\n" + ok + "\r\n\r\n", lim);
  EXPECT_EQ(r.head.headers[1].value.size(), 24u);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\n" + ok + "v\r\n\r\n", 494, lim);
  // Trailing whitespace still counts toward the line.
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\n" + ok + " \r\n\r\n", 494, lim);
  // A long name with no colon yet.
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\n" + std::string(40, 'n'), 494, lim);
}

TEST(Http1Parser, HeadSizeLimit) {
  const std::string base = "GET / HTTP/1.1\r\nHost: h\r\nX: ";
  const std::string tail = "\r\n\r\n";
  ParserLimits lim;
  lim.max_head = 100;
  const std::string exact = base + std::string(100 - base.size() - tail.size(), 'v') + tail;
  ASSERT_EQ(exact.size(), 100u);
  Outcome r = expect_done(exact, lim);
  EXPECT_EQ(r.consumed, 100u);
  const std::string over = base + std::string(101 - base.size() - tail.size(), 'v') + tail;
  expect_refused(over, 494, lim);
  // Endless empty lines before the request line hit the same limit.
  expect_refused(std::string(200, '\n'), 494, lim);
}

TEST(Http1Parser, FieldCountIsBoundByHeadBytesAndMaxHeaders) {
  // Many fields are fine while the head fits its buffers and max_headers
  // (nginx 1.27's, 1000 by default) allows them.
  std::string many = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 999; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  many += "\r\n";
  ParserLimits lim;
  lim.max_head = many.size();
  expect_done(many, lim);
  lim.max_head = many.size() - 10;
  expect_refused(many, 494, lim);
  lim.max_head = many.size();
  lim.max_headers = 999;  // one field more than allowed: nginx's 494 (a 400 page)
  expect_refused(many, 494, lim);
}

TEST(Http1Parser, MethodMustBeUpperCase) {
  expect_refused("get / HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("Get / HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("GET1 / HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_refused("G.T / HTTP/1.1\r\nHost: h\r\n\r\n", 400);
  expect_done("VERSION-CONTROL / HTTP/1.1\r\nHost: h\r\n\r\n");
  expect_done("MY_METHOD / HTTP/1.1\r\nHost: h\r\n\r\n");
}

TEST(Http1Parser, PipelinedDataIsLeftAlone) {
  ParserLimits lim;
  lim.max_head = 40;  // only the first head needs to fit
  const std::string first = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n";
  const std::string second = "GET /2 HTTP/1.1\r\nHost: h\r\n\r\n" + std::string(50, 'x');
  const std::string all = first + second;
  RequestParser p(lim);
  http::RequestHead head;
  size_t consumed = 0;
  ASSERT_EQ(p.parse(all, head, consumed), ParseStatus::done);
  EXPECT_EQ(consumed, first.size());
  EXPECT_EQ(head.path, "/1");
  p.reset();
  const std::string_view rest = std::string_view(all).substr(consumed);
  ASSERT_EQ(p.parse(rest, head, consumed), ParseStatus::done);
  EXPECT_EQ(head.path, "/2");
  EXPECT_EQ(consumed, first.size());
}

TEST(Http1Parser, DoneAndErrorAreSticky) {
  RequestParser p(ParserLimits{});
  http::RequestHead head;
  size_t consumed = 0;
  const std::string bad = "GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n";
  EXPECT_EQ(p.parse(bad, head, consumed), ParseStatus::error);
  EXPECT_EQ(p.parse(bad, head, consumed), ParseStatus::error);
  p.reset();
  const std::string good = "GET /ok HTTP/1.1\r\nHost: h\r\n\r\n";
  EXPECT_EQ(p.parse(good, head, consumed), ParseStatus::done);
  EXPECT_EQ(p.parse(good, head, consumed), ParseStatus::done);
  EXPECT_EQ(consumed, good.size());
  EXPECT_EQ(head.path, "/ok");
}

// ---- header fields ----

TEST(Http1Parser, HeaderNameErrors) {
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost\t: h\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\n: x\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nA@b: x\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nA\x80: x\r\n\r\n", 400);
}

TEST(Http1Parser, ObsFoldIsRefused) {
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tb\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\n Host: h\r\n\r\n", 400);
}

TEST(Http1Parser, HeaderValueErrors) {
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n"s, 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nX: a\x01" "b\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nX: a\x7f\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h\r\nX: \x1b[31m\r\n\r\n", 400);
}

// Values and targets are scanned eight bytes a step: a control byte or DEL
// is refused at every position of a long value or target, while HTAB,
// obs-text and every visible byte pass.
TEST(Http1Parser, EveryBadByteFoundInLongValuesAndTargets) {
  const std::string value = "abcdefghijklmnopqrstuvwxyz0123";
  const std::string target = "/abcdefghijklmnopqrstuvwxyz0123";
  for (size_t at = 0; at < value.size(); ++at) {
    for (char bad : {'\x01', '\x1f', '\x7f', '\0'}) {
      std::string v = value;
      v[at] = bad;
      expect_refused("GET / HTTP/1.1\r\nHost: h\r\nX: " + v + "\r\n\r\n", 400);
    }
  }
  for (size_t at = 1; at < target.size(); ++at) {
    for (char bad : {'\x01', '\x1f', '\x7f'}) {
      std::string t = target;
      t[at] = bad;
      expect_refused("GET " + t + " HTTP/1.1\r\nHost: h\r\n\r\n", 400);
    }
  }
  std::string ok = value;
  ok[3] = '\t';
  ok[9] = '\x80';
  ok[17] = '\xff';
  ok[25] = '~';
  Outcome r = expect_done("GET " + target + "?q=\x80 HTTP/1.1\r\nHost: h\r\nX: " + ok + "\r\n\r\n");
  ASSERT_EQ(r.head.headers.size(), 2u);
  EXPECT_EQ(r.head.headers[1].value, ok);
}

TEST(Http1Parser, HeaderValuesAreTrimmed) {
  Outcome r = expect_done("GET / HTTP/1.1\r\nHost: h\r\nA:  \t x y \t \r\nB:\r\nC: \r\nD:\xc3\xa9\r\n\r\n");
  ASSERT_EQ(r.head.headers.size(), 5u);
  EXPECT_EQ(r.head.headers[1].value, "x y");
  EXPECT_EQ(r.head.headers[2].value, "");
  EXPECT_EQ(r.head.headers[3].value, "");
  EXPECT_EQ(r.head.headers[4].value, "\xc3\xa9");
}

TEST(Http1Parser, UnderscoreHeadersAreDroppedUnlessAllowed) {
  const std::string in = "GET / HTTP/1.1\r\nHost: h\r\nX_Custom: 1\r\nY: 2\r\n\r\n";
  Outcome r = expect_done(in);
  ASSERT_EQ(r.head.headers.size(), 2u);
  EXPECT_EQ(r.head.headers[1].name, "Y");
  ParserLimits lim;
  lim.allow_underscores = true;
  r = expect_done(in, lim);
  ASSERT_EQ(r.head.headers.size(), 3u);
  EXPECT_EQ(r.head.headers[1].name, "X_Custom");
}

// nginx's ignore_invalid_headers: names beyond letters, digits, '-' (and
// '_' when allowed) are dropped when on, kept when off.
TEST(Http1Parser, InvalidNamesFollowIgnoreInvalidHeaders) {
  const std::string in = "GET / HTTP/1.1\r\nHost: h\r\nWeird.Name: 1\r\nX_U: 2\r\nOk-1: 3\r\n\r\n";
  Outcome r = expect_done(in);
  ASSERT_EQ(r.head.headers.size(), 2u);
  EXPECT_EQ(r.head.headers[1].name, "Ok-1");
  ParserLimits lim;
  lim.ignore_invalid = false;
  r = expect_done(in, lim);
  ASSERT_EQ(r.head.headers.size(), 4u);
  EXPECT_EQ(r.head.headers[1].name, "Weird.Name");
  EXPECT_EQ(r.head.headers[2].name, "X_U");
}

TEST(Http1Parser, HeaderTokens) {
  EXPECT_EQ(http::lookup_header_token("content-length"), HeaderToken::content_length);
  EXPECT_EQ(http::lookup_header_token("CONTENT-LENGTH"), HeaderToken::content_length);
  EXPECT_EQ(http::lookup_header_token("Transfer-Encoding"), HeaderToken::transfer_encoding);
  EXPECT_EQ(http::lookup_header_token("If-Modified-Since"), HeaderToken::if_modified_since);
  EXPECT_EQ(http::lookup_header_token("x-forwarded-for"), HeaderToken::x_forwarded_for);
  EXPECT_EQ(http::lookup_header_token("TE"), HeaderToken::te);
  EXPECT_EQ(http::lookup_header_token("Date"), HeaderToken::date);
  EXPECT_EQ(http::lookup_header_token("hosts"), HeaderToken::none);
  EXPECT_EQ(http::lookup_header_token("hos\r"), HeaderToken::none);
  EXPECT_EQ(http::lookup_header_token(""), HeaderToken::none);
  // Every token's own name maps back to it.
  for (int i = 1; i < static_cast<int>(HeaderToken::count_); ++i) {
    const auto t = static_cast<HeaderToken>(i);
    EXPECT_EQ(http::lookup_header_token(http::header_token_name(t)), t) << i;
  }
  EXPECT_EQ(http::header_flags(HeaderToken::connection), http::kHopByHop);
  EXPECT_EQ(http::header_flags(HeaderToken::upgrade), http::kHopByHop);
  EXPECT_EQ(http::header_flags(HeaderToken::te), http::kHopByHop);
  EXPECT_EQ(http::header_flags(HeaderToken::host), 0);
  EXPECT_EQ(http::header_flags(HeaderToken::content_length), 0);
}

// ---- framing ----

TEST(Http1Parser, ContentLength) {
  Outcome r = expect_done("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0042\r\n\r\n");
  EXPECT_EQ(r.head.content_length, 42);
  r = expect_done("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n");
  EXPECT_EQ(r.head.content_length, 5);
  r = expect_done("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5 ,5\r\n\r\n");
  EXPECT_EQ(r.head.content_length, 5);
  r = expect_done("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775807\r\n\r\n");
  EXPECT_EQ(r.head.content_length, INT64_MAX);
}

TEST(Http1Parser, BadContentLengthIsRefused) {
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1a\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5,\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775808\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400);
}

TEST(Http1Parser, Chunked) {
  Outcome r = expect_done("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n");
  EXPECT_TRUE(r.head.chunked);
  EXPECT_EQ(r.head.content_length, -1);
  r = expect_done("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , chunked ,\r\n\r\n");
  EXPECT_TRUE(r.head.chunked);
}

TEST(Http1Parser, ContentLengthWithTransferEncodingIsRefused) {
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400);
}

TEST(Http1Parser, MalformedTransferEncodingIsRefused) {
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chun ked\r\n\r\n", 400);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \"chunked\"\r\n\r\n", 400);
}

TEST(Http1Parser, UnknownTransferCodingIs501) {
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: foo\r\n\r\n", 501);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 501);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n",
                 501);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501);
  expect_refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
                 501);
}

TEST(Http1Parser, TransferEncodingInHttp10IsRefused) {
  expect_refused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
}

// ---- Host ----

TEST(Http1Parser, Http11NeedsHost) {
  expect_refused("GET / HTTP/1.1\r\n\r\n", 400);
  Outcome r = expect_done("GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r.head.host, "");
}

TEST(Http1Parser, DuplicateHostIsRefused) {
  expect_refused("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400);
}

TEST(Http1Parser, BadHostIsRefused) {
  expect_refused("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: a\\b\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: a..b\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: u@h\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h:80x\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: h:80:90\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost:\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: :80\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400);
  expect_refused("GET / HTTP/1.1\r\nHost: [zz]\r\n\r\n", 400);
  // An absolute target does not excuse a bad Host field.
  expect_refused("GET http://a/ HTTP/1.1\r\nHost: a/b\r\n\r\n", 400);
}

TEST(Http1Parser, HostIsNormalised) {
  EXPECT_EQ(expect_done("GET / HTTP/1.1\r\nHost: WWW.Example.COM.\r\n\r\n").head.host, "www.example.com");
  EXPECT_EQ(expect_done("GET / HTTP/1.1\r\nHost: example.com:8080\r\n\r\n").head.host, "example.com");
  EXPECT_EQ(expect_done("GET / HTTP/1.1\r\nHost: [2001:DB8::1]:443\r\n\r\n").head.host, "[2001:db8::1]");
  EXPECT_EQ(expect_done("GET / HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n").head.host, "10.0.0.1");
  EXPECT_EQ(expect_done("GET / HTTP/1.1\r\nHost: h:\r\n\r\n").head.host, "h");
}

// ---- connection management ----

TEST(Http1Parser, KeepAlive) {
  EXPECT_TRUE(expect_done("GET / HTTP/1.1\r\nHost: h\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(expect_done("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(expect_done("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, CLOSE\r\n\r\n").head.keep_alive);
  EXPECT_TRUE(expect_done("GET / HTTP/1.1\r\nHost: h\r\nConnection: closed\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(expect_done("GET / HTTP/1.0\r\n\r\n").head.keep_alive);
  EXPECT_TRUE(expect_done("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(expect_done("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n").head.keep_alive);
}

TEST(Http1Parser, ExpectContinue) {
  EXPECT_TRUE(expect_done("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n")
                  .head.expect_continue);
  EXPECT_FALSE(expect_done("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n").head.expect_continue);
  EXPECT_FALSE(expect_done("PUT / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n").head.expect_continue);
}

// ---- incremental feeding ----

TEST(Http1Parser, SplitAtEveryByteMatchesWhole) {
  const std::vector<std::string> inputs = {
      "GET /a?b HTTP/1.1\r\nHost: h\r\nCookie: a=b; c=d\r\nX:  y  \r\n\r\n",
      "\r\n\nPOST http://x:1/p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
  };
  for (const std::string& in : inputs) {
    Outcome whole = parse_whole(in);
    for (size_t cut = 0; cut <= in.size(); ++cut) {
      RequestParser p(ParserLimits{});
      http::RequestHead head;
      size_t consumed = 0;
      std::string a = in.substr(0, cut);
      ParseStatus st = p.parse(a, head, consumed);
      if (st == ParseStatus::need_more) {
        std::string b = in;  // a new buffer holding the same prefix and more
        st = p.parse(b, head, consumed);
        if (st == ParseStatus::done) {
          EXPECT_EQ(head.path, whole.head.path);
        }
      }
      EXPECT_EQ(st, whole.status) << in << " cut " << cut;
      if (st == ParseStatus::error) {
        EXPECT_EQ(p.error().status, whole.error.status);
      }
      if (st == ParseStatus::done) {
        EXPECT_EQ(consumed, whole.consumed);
      }
    }
  }
}

TEST(Http1Parser, IncompleteHeadNeedsMore) {
  Outcome r = parse_whole("GET / HTTP/1.1\r\nHost: h\r\n");
  EXPECT_EQ(r.status, ParseStatus::need_more);
  r = parse_whole("");
  EXPECT_EQ(r.status, ParseStatus::need_more);
  r = parse_whole("\r\n");
  EXPECT_EQ(r.status, ParseStatus::need_more);
}

}  // namespace
}  // namespace torii::http1
