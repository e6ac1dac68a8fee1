// The cache in front of an upstream session (proxy_pass, and the gateway
// protocols that share the session): decides $upstream_cache_status and
// either answers from the cache (HIT, STALE, UPDATING) or starts the
// session with a Fill (MISS, EXPIRED, BYPASS). With proxy_cache_lock, a
// request that finds another filling the same entry waits (woken by the
// zone) until the entry is there, the lock is released or lock_timeout
// passes.
#pragma once

#include <functional>
#include <memory>

#include "cache/fill.h"

namespace torii::http {
class Exchange;
}
namespace torii::config {
struct ProxyConfig;
}

namespace torii::cache {

// Starts the upstream session; `fill` is null when the cache takes no part.
using StartUpstream = std::function<void(http::Exchange&, std::unique_ptr<Fill> fill)>;

// The location proxies with proxy_cache set: look up, answer or start.
void serve(http::Exchange& ex, const config::ProxyConfig& cfg, StartUpstream start);

// Sends a stored entry as the response (ranges from the cached file).
void send_entry(http::Exchange& ex, const config::ProxyConfig& cfg, const Entry& entry);

}  // namespace torii::cache
