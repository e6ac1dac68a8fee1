// limit_rate / limit_rate_after / $limit_rate / X-Accel-Limit-Rate: the
// response body leaves at most at `rate` bytes a second once
// `limit_rate_after` bytes have gone, as nginx's write filter paces it
// (an allowance of rate * (seconds since the response began + 1), so the
// first second's worth leaves at once). A RateSink between the exchange
// (or its compression filter) and the codec holds the bytes not yet
// allowed and hands them on from a timer of the worker's loop, so it works
// the same over HTTP/1.1, HTTP/2 and HTTP/3.
#pragma once

#include <memory>
#include <string_view>

#include "http/response.h"

namespace torii::http {
class Exchange;
}

namespace torii::limits {

// The rate the response goes at: $limit_rate when set (by `set` or the
// upstream's X-Accel-Limit-Rate), else the location's limit_rate; 0: none.
int64_t effective_limit_rate(const http::Exchange& ex);

// `set $limit_rate VALUE`: a size ("100k"); a bad one is logged and ignored.
void set_limit_rate(http::Exchange& ex, std::string_view value);

// A pacing sink over `next` when the response has a rate; null otherwise.
std::shared_ptr<http::ResponseSink> make_rate_sink(http::Exchange& ex, http::ResponseSink& next);

}  // namespace torii::limits
