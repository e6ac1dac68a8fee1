// HTTP dates (RFC 9110 5.6.7) and the two log time formats nginx offers.
// Formatting the same second over and over is the common case (Date on
// every response, $time_local on every log line), so each thread keeps the
// last second's text and reformats only when the second changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace torii::http {

// Length of an IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
inline constexpr size_t kHttpDateLen = 29;

// Writes the IMF-fixdate for `unix_sec` (UTC) into out[0..29); no NUL.
// Times before 1970 or after 9999 are clamped to those bounds.
void format_http_date(int64_t unix_sec, char* out);
std::string format_http_date(int64_t unix_sec);

// The IMF-fixdate for `unix_sec`, from this thread's one-second cache. The
// view stays valid until this thread asks for a different second.
std::string_view cached_http_date(int64_t unix_sec);

// The same for a file's Last-Modified, from a cache of its own: a file
// server answers for the same few files, and sharing the clock's entry
// would reformat both on every response.
std::string_view cached_mtime_date(int64_t unix_sec);

// Parses any of the three formats a recipient must accept: IMF-fixdate,
// obsolete RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT", two-digit years below
// 70 are 20xx) and asctime ("Sun Nov  6 08:49:37 1994"). The weekday is not
// checked against the date. Text after a complete date is accepted only when
// it starts with ';' or whitespace (old browsers append "; length=N").
// Returns seconds since the epoch, or nullopt if the text is not a date.
std::optional<int64_t> parse_http_date(std::string_view text);

// nginx's $time_local, "29/Nov/2026:23:00:00 +0000", in the process's local
// time zone; cached per thread per second like cached_http_date.
std::string_view cached_time_local(int64_t unix_sec);

// nginx's $time_iso8601, "2026-11-29T23:00:00+00:00", local time zone;
// cached per thread per second.
std::string_view cached_time_iso8601(int64_t unix_sec);

// Civil-date helpers shared with the other formatters (UTC, proleptic
// Gregorian). days_from_civil(1970, 1, 1) == 0.
int64_t days_from_civil(int64_t year, unsigned month, unsigned day);

}  // namespace torii::http
