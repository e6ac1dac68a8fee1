// What the proxy sends upstream and what it passes back: the upstream
// request head (nginx's URI rules, proxy_set_header with its defaults,
// hop-by-hop fields dropped) and the response head for the client
// (hop-by-hop and hidden fields dropped, proxy_redirect applied). Pure
// functions of the exchange and the config, tested without sockets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/proxy_config.h"
#include "http/response.h"
#include "http1/response_parser.h"

namespace torii::http {
class Exchange;
}
namespace torii::cache {
struct UpstreamRequestChanges;  // cache/fill.h
}

namespace torii::handlers {

// The URI sent upstream: with a URI part in proxy_pass, the location's
// prefix of the (decoded) URI is replaced by it and the result escaped;
// without one, the request URI goes as the client sent it (or, after an
// internal redirect, the current URI, escaped).
std::string upstream_uri(const http::Exchange& ex, const config::ProxyConfig& p);

enum class RequestBody : uint8_t { none, length, chunked };

struct RequestHeadInfo {
  bool upgrade = false;  // an Upgrade field went upstream (a 101 may follow)
};

// Appends the request line and fields, ending with the empty line.
// `cache` (may be null): what proxy_cache changes in the request.
RequestHeadInfo build_request_head(const http::Exchange& ex, const config::ProxyConfig& p, const std::string& uri,
                                   RequestBody body, int64_t length, std::string& out,
                                   const cache::UpstreamRequestChanges* cache = nullptr);

// The client's response head from the upstream's.
// (non-const: a regex rule's captures become the request's, as nginx's)
// Whether a field of an upstream's trailers (proxy_pass_trailers) or of
// its 103 Early Hints goes on to the client: not hop-by-hop, not hidden by
// default unless passed, not in proxy_hide_header, as nginx filters both
// like the head's fields.
bool field_passes(const config::ProxyConfig& p, std::string_view name);

void build_response_head(http::Exchange& ex, const config::ProxyConfig& p, const http1::ParsedResponse& r,
                         http1::BodyFraming framing, http::ResponseHead& out);

// The upstream's X-Accel-Redirect target, unless proxy_ignore_headers
// names it; empty: none.
std::string_view accel_redirect_target(const config::ProxyConfig& p, const http1::ParsedResponse& r);

// The upstream's fields nginx keeps for the response of an X-Accel-Redirect
// target: Content-Type, Set-Cookie, Content-Disposition, Cache-Control,
// Expires, Accept-Ranges.
void accel_redirect_fields(http::Exchange& ex, const config::ProxyConfig& p, const http1::ParsedResponse& r,
                           std::vector<std::pair<std::string, std::string>>& out);

// The upstream's X-Accel-Buffering (unless ignored): 1 "yes", 0 "no"
// (nginx's spelling, any case), -1 absent or anything else.
int accel_buffering(const config::ProxyConfig& p, const http1::ParsedResponse& r);

// proxy_redirect applied to one Location or Refresh value; false if no rule matched.
bool rewrite_redirect(http::Exchange& ex, const config::ProxyConfig& p, std::string& value);

}  // namespace torii::handlers
