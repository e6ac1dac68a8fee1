#include "http/range.h"

#include <algorithm>
#include <limits>

namespace torii::http {

namespace {

bool is_ows(char c) { return c == ' ' || c == '\t'; }

// Reads 1+ digits at s[i]; false on none or on overflow.
bool read_number(std::string_view s, size_t& i, int64_t& out) {
  const size_t begin = i;
  int64_t v = 0;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    const int d = s[i] - '0';
    if (v > (kMax - d) / 10) return false;
    v = v * 10 + d;
    ++i;
  }
  out = v;
  return i > begin;
}

bool starts_with_bytes_unit(std::string_view v) {
  static constexpr std::string_view kUnit = "bytes=";
  if (v.size() < kUnit.size()) return false;
  for (size_t i = 0; i < kUnit.size(); ++i) {
    char c = v[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kUnit[i]) return false;
  }
  return true;
}

// Merges overlapping or adjacent ranges when there are any; leaves the
// client's order alone when the ranges are disjoint.
void coalesce(std::vector<ByteRange>& r) {
  if (r.size() < 2) return;
  std::vector<ByteRange> sorted = r;
  std::sort(sorted.begin(), sorted.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.start < b.start; });
  bool touching = false;
  for (size_t i = 1; i < sorted.size() && !touching; ++i)
    touching = sorted[i].start <= sorted[i - 1].end;
  if (!touching) return;
  r.clear();
  for (const ByteRange& b : sorted) {
    if (!r.empty() && b.start <= r.back().end) {
      r.back().end = std::max(r.back().end, b.end);
    } else {
      r.push_back(b);
    }
  }
}

}  // namespace

RangeOutcome parse_range(std::string_view value, int64_t size, std::vector<ByteRange>& out,
                         size_t max_ranges) {
  out.clear();
  if (!starts_with_bytes_unit(value)) return RangeOutcome::ignore;
  size_t i = 6;
  size_t specs = 0;
  // 128 bits: up to kMaxRanges lengths of up to INT64_MAX each can't overflow.
  __int128 total = 0;
  bool any_spec = false;
  while (true) {
    // Empty list elements ("a-b,,c-d") are allowed by the list syntax.
    while (i < value.size() && (is_ows(value[i]) || value[i] == ',')) ++i;
    if (i >= value.size()) break;
    int64_t first = 0, last = -1;
    bool suffix = false;
    if (value[i] == '-') {
      suffix = true;
      ++i;
      if (!read_number(value, i, last)) return RangeOutcome::ignore;
    } else {
      if (!read_number(value, i, first)) return RangeOutcome::ignore;
      if (i >= value.size() || value[i] != '-') return RangeOutcome::ignore;
      ++i;
      if (i < value.size() && value[i] >= '0' && value[i] <= '9') {
        if (!read_number(value, i, last)) return RangeOutcome::ignore;
        if (last < first) return RangeOutcome::ignore;
      }
    }
    while (i < value.size() && is_ows(value[i])) ++i;
    if (i < value.size() && value[i] != ',') return RangeOutcome::ignore;
    any_spec = true;
    if (++specs > max_ranges) return RangeOutcome::ignore;

    ByteRange r;
    if (suffix) {
      if (last == 0) continue;  // "-0" selects nothing
      r.start = last < size ? size - last : 0;
      r.end = size;
    } else {
      if (first >= size) continue;  // unsatisfiable; others may still be fine
      r.start = first;
      r.end = (last < 0 || last >= size) ? size : last + 1;
    }
    total += r.length();
    out.push_back(r);
  }
  if (!any_spec) return RangeOutcome::ignore;
  if (size == 0) {
    out.clear();
    return RangeOutcome::ignore;
  }
  if (out.empty()) return RangeOutcome::unsatisfiable;
  if (total > static_cast<__int128>(size) * 2) {
    out.clear();
    return RangeOutcome::ignore;
  }
  coalesce(out);
  return RangeOutcome::ok;
}

}  // namespace torii::http
