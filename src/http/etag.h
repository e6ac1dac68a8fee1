// Entity tags as nginx makes them for files ("mtimehex-sizehex", strong),
// and the two comparisons RFC 9110 asks for: weak for If-None-Match, strong
// for If-Match and If-Range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace torii::http {

// Longest text format_etag writes: two quotes, 16 + 1 + 16 hex digits.
inline constexpr size_t kMaxEtagLen = 35;

// Writes "\"<mtime hex>-<size hex>\"" (lower-case hex, no leading zeros) to
// `out`, which must hold kMaxEtagLen bytes; returns the length.
size_t format_etag(int64_t mtime, int64_t size, char* out);
std::string make_etag(int64_t mtime, int64_t size);

// If-None-Match: true when `header` is "*" or lists a tag that matches
// `etag` by weak comparison (W/ prefixes ignored on both sides). An empty
// `etag` (none generated) matches only "*". A malformed list matches nothing
// from the point where it goes wrong.
bool none_match_hits(std::string_view header, std::string_view etag);

// If-Match (and If-Range's tag form): true when `header` is "*" or lists a
// strong tag equal to `etag`; weak tags never match strongly.
bool match_hits_strong(std::string_view header, std::string_view etag);

}  // namespace torii::http
