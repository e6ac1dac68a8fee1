// A request's preconditions (RFC 9110 13.2.2) against the validators of the
// response it would get, as nginx's not-modified filter judges a static
// file or a cached response: If-Match, else If-Unmodified-Since, fail with
// 412; then If-None-Match, else If-Modified-Since (under the location's
// `if_modified_since`), turn a 200 into a 304.
#pragma once

#include <cstdint>
#include <string_view>

namespace torii::http {

class Exchange;

// `etag` empty: the response has none; `last_modified` -1: likewise.
// Returns 412, 304, or 0 to carry on.
int evaluate_preconditions(const Exchange& ex, std::string_view etag, int64_t last_modified);

}  // namespace torii::http
