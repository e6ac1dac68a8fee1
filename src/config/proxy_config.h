// The proxy module's settings for one block: proxy_pass and the proxy_*
// directives, merged down http -> server -> location like the rest.
// `upstream` is set only where proxy_pass was given; the other fields are
// inherited so that a server-level proxy_set_header reaches its locations.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/template.h"

namespace torii::config {

struct UpstreamGroupConfig;
struct UpstreamTlsConfig;
struct CacheSettings;  // config/cache_config.h
struct UpstreamBind;   // config/upstream_bind.h
class Regex;          // config/regex.h

// proxy_next_upstream conditions.
enum NextUpstream : uint32_t {
  kNextError = 1 << 0,
  kNextTimeout = 1 << 1,
  kNextInvalidHeader = 1 << 2,
  kNextHttp500 = 1 << 3,
  kNextHttp502 = 1 << 4,
  kNextHttp503 = 1 << 5,
  kNextHttp504 = 1 << 6,
  kNextHttp403 = 1 << 7,
  kNextHttp404 = 1 << 8,
  kNextHttp429 = 1 << 9,
  kNextNonIdempotent = 1 << 10,
};

// proxy_ignore_headers (and fastcgi_, uwsgi_, grpc_): the upstream's
// fields whose meaning is not acted on, by the proxy (X-Accel-*) and by
// the cache (all of them).
enum IgnoreHeader : uint32_t {
  kIgnoreXAccelRedirect = 1 << 0,
  kIgnoreXAccelExpires = 1 << 1,
  kIgnoreXAccelLimitRate = 1 << 2,
  kIgnoreXAccelBuffering = 1 << 3,
  kIgnoreXAccelCharset = 1 << 4,
  kIgnoreExpires = 1 << 5,
  kIgnoreCacheControl = 1 << 6,
  kIgnoreSetCookie = 1 << 7,
  kIgnoreVary = 1 << 8,
};

struct ProxyHeader {
  std::string name;
  Template value;  // renders empty: the header is not sent at all
};

// One proxy_redirect, proxy_cookie_domain or proxy_cookie_path rule, as
// nginx's: with `regex` (`~`, `~*`) a match anywhere in the value replaces
// all of it with `to`, which may use the match's captures; else `from`,
// rendered, is a prefix (proxy_redirect, cookie path) or the whole domain,
// without a leading dot and in any case (cookie domain), replaced by `to`.
struct ProxyRedirect {
  Template from;
  std::shared_ptr<const Regex> regex;
  Template to;
};

// One proxy_cookie_flags line: the cookie it names (case-insensitively,
// or a caseless `~` regex) gets these flags: secure, nosecure, httponly,
// nohttponly, samesite=strict|lax|none, nosamesite (each may be a variable).
struct CookieFlags {
  Template name;
  std::shared_ptr<const Regex> regex;
  std::vector<Template> flags;
};

struct ProxyConfig {
  // proxy_pass (location only).
  std::shared_ptr<const UpstreamGroupConfig> upstream;  // null: no proxy_pass here
  std::string url;         // as written, for proxy_redirect default
  std::string proxy_host;  // $proxy_host: "name" or "host:port" (":80" left out)
  bool has_uri = false;    // proxy_pass http://b/uri: the location prefix is replaced
  std::string uri;
  std::string location_prefix;  // the location's pattern, for the URI rules
  bool uri_from_regex = false;  // location is a regex or named: the URI passes unchanged
  // proxy_pass with variables: the URL is rendered per request, its host
  // names an upstream {} or is resolved (handlers/proxy_target.cc), and a
  // URI part replaces the request's whole URI (uri_verbatim).
  Template url_template;
  bool uri_verbatim = false;
  bool proxies() const { return upstream != nullptr || !url_template.empty(); }
  // proxy_pass https://: TLS to the upstream, with the proxy_ssl_* settings
  // in `tls` (null until a proxy_ssl_* directive or an https proxy_pass).
  bool ssl = false;
  std::shared_ptr<const UpstreamTlsConfig> tls;

  int http_version = 10;  // proxy_http_version 1.0 | 1.1
  // proxy_set_body: the body sent upstream, rendered per request, in place
  // of the client's (read and dropped); Content-Length is its length.
  bool has_set_body = false;
  Template set_body;
  Template method;        // proxy_method (may hold variables); empty: the client's method
  std::vector<ProxyHeader> set_headers;     // proxy_set_header (replaces the defaults by name)
  std::vector<std::string> hide_headers;    // proxy_hide_header, lower-case
  std::vector<std::string> pass_headers;    // proxy_pass_header, lower-case
  enum class RedirectMode : uint8_t { default_, off, list };
  RedirectMode redirect_mode = RedirectMode::default_;
  std::vector<ProxyRedirect> redirects;     // "proxy_redirect FROM TO" (and "default" expanded)
  bool redirect_default_too = false;         // "default" listed among FROM TO pairs
  // proxy_cookie_domain, proxy_cookie_path, proxy_cookie_flags: applied to
  // the upstream's Set-Cookie fields (empty: off).
  std::vector<ProxyRedirect> cookie_domains;
  std::vector<ProxyRedirect> cookie_paths;
  std::vector<CookieFlags> cookie_flags;

  Ms connect_timeout{60'000};
  Ms send_timeout{60'000};
  Ms read_timeout{60'000};
  bool buffering = true;
  size_t buffer_size = 4096;
  size_t buffers_number = 8;
  size_t buffers_size = 4096;
  size_t busy_buffers_size = 8192;
  bool request_buffering = true;
  uint32_t next_upstream = kNextError | kNextTimeout;
  unsigned next_upstream_tries = 0;  // 0: unlimited
  Ms next_upstream_timeout{0};       // 0: unlimited
  bool intercept_errors = false;
  // The upstream's 404 is answered by error handling (error_page, else the
  // built-in page) even with no error_page for it: memcached's miss.
  bool intercept_404 = false;
  // nginx's upstream force_ranges (always on for memcached): a 200 of known
  // length takes one byte range (the range filter's single_range) whether
  // or not the upstream said Accept-Ranges.
  bool force_ranges = false;
  bool pass_request_headers = true;
  bool pass_request_body = true;
  bool pass_trailers = false;  // proxy_pass_trailers: the upstream's chunked trailers go to the client
  bool ignore_client_abort = false;
  bool socket_keepalive = false;  // SO_KEEPALIVE on the upstream socket (*_socket_keepalive)
  int socket_rcvbuf = 0;          // SO_RCVBUF, SO_SNDBUF on it (*_socket_rcvbuf, _sndbuf); 0: the system's
  int socket_sndbuf = 0;
  // *_limit_rate: bytes per second read from the upstream while the
  // response is buffered (as nginx's event pipe); 0: no limit.
  size_t limit_rate = 0;
  std::shared_ptr<const UpstreamBind> bind;  // *_bind: the connection's source address; null: off
  // proxy_cache and its directives (config/cache_config.h); null: never set.
  std::shared_ptr<const CacheSettings> cache;
  uint32_t ignore_headers = 0;  // IgnoreHeader bits
  // *_store: a complete 200 response is also written to disk, into a file
  // under temp_path first, then renamed to root + URI (`on`) or to
  // store_path rendered (handlers/upstream_store). Not with *_cache: the
  // one set in a block turns the inherited other off, as nginx's merge.
  enum class Store : uint8_t { off, on, path };
  Store store = Store::off;
  Template store_path;
  uint16_t store_access = 0600;  // *_store_access (folders add x where r)
  std::string temp_path;         // *_temp_path; "<prefix><module>_temp" once *_store is on
  std::array<uint8_t, 3> temp_levels{};  // its LEVEL arguments (core/temp_file); 0: none
};

}  // namespace torii::config
