// libFuzzer target for the upstream response head parser.
//
// The head is parsed whole and again fed in two pieces (split point from the
// input's first byte); the verdicts must agree, because what a proxy makes
// of an upstream's bytes must not depend on how TCP cut them. A completed
// head's framing then drives the body decoder over the rest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http1/response_parser.h"

using torii::http1::BodyFraming;
using torii::http1::ParsedResponse;
using torii::http1::ParseStatus;
using torii::http1::ResponseParser;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t split_at = data[0];
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

  ResponseParser whole(4096);
  ParsedResponse a;
  size_t consumed_a = 0;
  ParseStatus st_a = whole.parse(text, a, consumed_a);

  ResponseParser pieces(4096);
  ParsedResponse b;
  size_t consumed_b = 0;
  std::string buf = text.substr(0, std::min(split_at, text.size()));
  ParseStatus st_b = pieces.parse(buf, b, consumed_b);
  if (st_b == ParseStatus::need_more) {
    buf = text;
    st_b = pieces.parse(buf, b, consumed_b);
  }
  check(st_a == st_b || (st_b == ParseStatus::done && st_a == ParseStatus::done));
  if (st_a != ParseStatus::done) return 0;
  check(consumed_a == consumed_b && consumed_a <= text.size());
  check(a.status == b.status && a.content_length == b.content_length && a.chunked == b.chunked);
  check(a.headers.size() == b.headers.size());
  check(a.status >= 100 && a.status <= 999);

  std::string_view rest = std::string_view(text).substr(consumed_a);
  torii::http1::BodyDecoder dec;
  BodyFraming f = torii::http1::response_framing(a, false);
  if (f == BodyFraming::length) dec.start_length(a.content_length);
  if (f == BodyFraming::chunked) dec.start_chunked();
  if (f == BodyFraming::length || f == BodyFraming::chunked) {
    size_t consumed = 0;
    size_t total = 0;
    dec.decode(rest, consumed, [&](std::string_view d) { total += d.size(); });
    check(consumed <= rest.size() && total <= rest.size());
  }
  return 0;
}
