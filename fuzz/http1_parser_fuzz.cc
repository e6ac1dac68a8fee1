// libFuzzer target for the HTTP/1 request parser and body decoder.
//
// The head is parsed whole and again in two pieces (the split point comes
// from the input), each piece in its own buffer; the outcomes must agree,
// since a parser whose verdict depends on how TCP cut the stream is a
// smuggling bug. A completed head then drives the body decoder the same way.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "http1/parser.h"

using torii::http1::BodyDecoder;
using torii::http1::ParserLimits;
using torii::http1::ParseStatus;
using torii::http1::RequestParser;

namespace {

struct HeadOutcome {
  ParseStatus status = ParseStatus::need_more;
  int error_status = 0;
  size_t consumed = 0;
  std::string path;
  std::string host;
  size_t headers = 0;
  int64_t content_length = -1;
  bool chunked = false;
  bool keep_alive = false;
};

void check(bool ok) {
  if (!ok) std::abort();
}

HeadOutcome outcome(const RequestParser& p, ParseStatus st, const torii::http::RequestHead& h, size_t consumed) {
  HeadOutcome o;
  o.status = st;
  if (st == ParseStatus::error) o.error_status = p.error().status;
  if (st == ParseStatus::done) {
    o.consumed = consumed;
    o.path = h.path;
    o.host = h.host;
    o.headers = h.headers.size();
    o.content_length = h.content_length;
    o.chunked = h.chunked;
    o.keep_alive = h.keep_alive;
  }
  return o;
}

bool same(const HeadOutcome& a, const HeadOutcome& b) {
  return a.status == b.status && a.error_status == b.error_status && a.consumed == b.consumed &&
         a.path == b.path && a.host == b.host && a.headers == b.headers &&
         a.content_length == b.content_length && a.chunked == b.chunked && a.keep_alive == b.keep_alive;
}

// Decodes the body whole and split at `cut`; both must agree.
void decode_body(const torii::http::RequestHead& head, std::string_view rest, size_t cut) {
  auto start = [&](BodyDecoder& d) {
    if (head.chunked) d.start_chunked();
    else d.start_length(head.content_length < 0 ? 0 : head.content_length);
  };
  BodyDecoder whole;
  start(whole);
  std::string body_whole;
  size_t used_whole = 0;
  const auto st_whole = whole.decode(rest, used_whole, [&](std::string_view v) { body_whole.append(v); });
  check(used_whole <= rest.size());

  BodyDecoder split;
  start(split);
  std::string body_split;
  cut = rest.empty() ? 0 : cut % (rest.size() + 1);
  const std::string first(rest.substr(0, cut));
  size_t used = 0;
  auto st = split.decode(first, used, [&](std::string_view v) { body_split.append(v); });
  check(used <= first.size());
  size_t total = used;
  if (st == BodyDecoder::Status::need_more) {
    const std::string second(rest.substr(used));
    size_t used2 = 0;
    st = split.decode(second, used2, [&](std::string_view v) { body_split.append(v); });
    check(used2 <= second.size());
    total += used2;
  }
  check(st == st_whole);
  if (st != BodyDecoder::Status::error) {
    check(body_split == body_whole);
    check(total == used_whole);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte chooses the split and a few limits, so small limits get
  // exercised without huge inputs.
  const uint8_t knob = data[0];
  const std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
  ParserLimits limits;
  if (knob & 0x80) {
    limits.max_request_line = 64;
    limits.max_header_line = 48;
    limits.max_head = 256;
  }
  limits.allow_underscores = (knob & 0x40) != 0;
  const size_t cut = input.empty() ? 0 : (static_cast<size_t>(knob) * 7919u) % (input.size() + 1);

  torii::http::RequestHead head_whole;
  RequestParser whole(limits);
  size_t consumed_whole = 0;
  const ParseStatus st_whole = whole.parse(input, head_whole, consumed_whole);
  const HeadOutcome a = outcome(whole, st_whole, head_whole, consumed_whole);
  if (st_whole == ParseStatus::done) check(consumed_whole <= input.size());

  torii::http::RequestHead head_split;
  RequestParser split(limits);
  size_t consumed_split = 0;
  const std::string first = input.substr(0, cut);
  ParseStatus st_split = split.parse(first, head_split, consumed_split);
  if (st_split == ParseStatus::need_more) {
    const std::string second = input;  // a different buffer, same bytes
    st_split = split.parse(second, head_split, consumed_split);
  }
  const HeadOutcome b = outcome(split, st_split, head_split, consumed_split);
  check(same(a, b));

  if (st_whole == ParseStatus::done) {
    // Views must lie inside the buffer they were made from.
    for (const auto& h : head_whole.headers) {
      check(h.name.data() >= input.data() && h.name.data() + h.name.size() <= input.data() + input.size());
      check(h.value.data() >= input.data() && h.value.data() + h.value.size() <= input.data() + input.size());
    }
    check(!head_whole.path.empty() || head_whole.method == torii::http::Method::connect);
    decode_body(head_whole, std::string_view(input).substr(consumed_whole), knob);
  }
  return 0;
}
