// The Range request header (RFC 9110 14.2) for byte ranges: parsing,
// satisfiability against a representation's size, and coalescing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace torii::http {

// Half-open: bytes [start, end) of the representation.
struct ByteRange {
  int64_t start = 0;
  int64_t end = 0;
  int64_t length() const { return end - start; }
  bool operator==(const ByteRange&) const = default;
};

enum class RangeOutcome {
  ignore,         // not a byte range we serve: answer 200 with the whole file
  ok,             // `out` holds one or more satisfiable ranges: 206
  unsatisfiable,  // well-formed but no range overlaps the file: 416
};

// Limits that keep a Range header from turning a small file into a large
// amount of work (many tiny parts, or the same bytes sent many times).
inline constexpr size_t kMaxRanges = 100;

// Parses `value` ("bytes=0-99, 200-, -50") against a representation of
// `size` bytes and fills `out` with the satisfiable ranges.
//   - A unit other than "bytes" or any syntax error (including last < first)
//     makes the whole header ignored, as RFC 9110 14.2 asks.
//   - Ranges starting at or beyond `size` are dropped; if none remain the
//     outcome is unsatisfiable. An empty file ignores Range (as nginx does).
//   - More than `max_ranges` ranges, or ranges adding up to more than twice
//     the size, are ignored (the client gets the whole file once).
//   - If ranges overlap or touch, they are sorted and merged; otherwise the
//     client's order is kept (RFC 9110 14.6 asks for it).
// The limit a location's `max_ranges` asks for (unset: kMaxRanges).
inline size_t range_limit(uint32_t max_ranges) { return max_ranges == UINT32_MAX ? kMaxRanges : max_ranges; }

RangeOutcome parse_range(std::string_view value, int64_t size, std::vector<ByteRange>& out,
                         size_t max_ranges = kMaxRanges);

}  // namespace torii::http
