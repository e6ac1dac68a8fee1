// The proxy handler (proxy_pass). One ProxySession per request, kept in the
// exchange's handler_state, goes through named phases:
//
//   read client body (when proxy_request_buffering is on)
//   → pick upstream (the group's balancer, skipping servers already tried)
//   → connect (a pooled keep-alive connection, else a new one, with
//     proxy_connect_timeout)
//   → send head and body (proxy_send_timeout)
//   → read response head (proxy_read_timeout; strict parser)
//   → filter response head → stream body to the client, with back-pressure
//     (at most proxy_buffers queued for a slow client) or tunnel after 101
//   → finish: the connection back to the pool or closed; $upstream_* set.
//
// A failed try goes through one hook, try_failed(), which logs it like
// nginx, updates the server's passive health and decides between another
// try (proxy_next_upstream, _tries, _timeout; never a non-idempotent request
// already sent unless non_idempotent) and the error response (502/504, where
// error_page applies).
#pragma once

#include <functional>
#include <memory>

namespace torii::http {
class Exchange;
}
namespace torii::config {
struct ProxyConfig;
}
namespace torii::upstream {
struct Group;
}

namespace torii::handlers {

// Starts proxying; the response completes later, from the event loop.
void serve_proxy(http::Exchange& ex);
// Starts the session for a known group; `owned` (may be null) keeps `cfg`
// alive when it was made for this request (proxy_pass with variables).
void start_proxy(http::Exchange& ex, const config::ProxyConfig& cfg, std::shared_ptr<upstream::Group> group,
                 std::shared_ptr<const config::ProxyConfig> owned);
// proxy_pass with variables (proxy_target.cc): renders the URL, finds the
// upstream {} it names or resolves its host, then calls start_proxy.
void serve_proxy_with_variables(http::Exchange& ex, const config::ProxyConfig& cfg);

class UpstreamCodec;
// The same session over another wire protocol (fastcgi_pass, uwsgi_pass):
// `cfg` holds the shared upstream settings (group, timeouts, buffers,
// retries, hidden and passed fields).
void serve_upstream(http::Exchange& ex, const config::ProxyConfig& cfg, std::unique_ptr<UpstreamCodec> codec);
// As start_proxy, over another wire protocol.
void start_upstream(http::Exchange& ex, const config::ProxyConfig& cfg, std::shared_ptr<upstream::Group> group,
                    std::unique_ptr<UpstreamCodec> codec, std::shared_ptr<const config::ProxyConfig> owned);
// fastcgi_pass, scgi_pass, uwsgi_pass with variables (proxy_target.cc): the
// address ("host:port", "unix:/path", an upstream {} name) is rendered and
// found or resolved as proxy_pass's host; `make_codec` makes the
// protocol's codec once the session starts.
void serve_gateway_with_variables(http::Exchange& ex, const config::ProxyConfig& cfg,
                                  std::function<std::unique_ptr<UpstreamCodec>()> make_codec);

}  // namespace torii::handlers
