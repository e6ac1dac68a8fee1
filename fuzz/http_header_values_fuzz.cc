// Fuzzes the parsers of header values the static handler trusts: Range,
// HTTP dates and entity-tag lists. Ranges must stay inside the file; a date
// must survive a format/parse round trip.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "http/date.h"
#include "http/etag.h"
#include "http/range.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<torii::http::ByteRange> ranges;
  int64_t file_size = size ? data[0] * 1000003LL : 0;
  if (torii::http::parse_range(text, file_size, ranges) == torii::http::RangeOutcome::ok) {
    for (const auto& r : ranges) {
      if (r.start < 0 || r.end > file_size || r.start >= r.end) __builtin_trap();
    }
  }
  auto date = torii::http::parse_http_date(text);
  if (date && *date >= 0) {
    auto formatted = torii::http::format_http_date(*date);
    if (torii::http::parse_http_date(formatted) != date) __builtin_trap();
  }
  torii::http::none_match_hits(text, "\"abc-12\"");
  torii::http::match_hits_strong(text, "\"abc-12\"");
  return 0;
}
