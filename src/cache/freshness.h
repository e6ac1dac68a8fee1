// Whether an upstream response may be stored, and until when, as nginx
// decides it: Set-Cookie and `Vary: *` keep it out; X-Accel-Expires, then
// Cache-Control (no-cache, no-store, private; s-maxage, max-age), then
// Expires set its validity; without them proxy_cache_valid for its status
// does. proxy_ignore_headers takes fields out of the decision. Also reads
// RFC 5861's stale-while-revalidate and stale-if-error. A pure function.
#pragma once

#include <cstdint>
#include <string>

#include "config/cache_config.h"
#include "http1/response_parser.h"

namespace torii::cache {

struct Freshness {
  bool cacheable = false;
  int64_t valid_sec = 0;  // absolute
  int64_t stale_while_revalidate = 0;
  int64_t stale_if_error = 0;
  std::string vary;   // the Vary field ("" without one or when ignored)
  std::string etag;
  int64_t last_modified = -1;
};

Freshness judge(const http1::ParsedResponse& r, const config::CacheSettings& s, int64_t now_sec);

// proxy_cache_valid's time for a status; 0: none applies.
int64_t valid_for_status(const config::CacheSettings& s, int status);

}  // namespace torii::cache
