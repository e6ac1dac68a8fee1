#include "handlers/proxy_headers.h"

#include <strings.h>

#include "cache/fill.h"
#include "config/directives.h"
#include "config/upstream_config.h"
#include "core/ascii.h"
#include "handlers/proxy_cookie.h"
#include "handlers/proxy_rewrite_rule.h"
#include "http/exchange.h"
#include "http/field_bytes.h"
#include "http/header_token.h"
#include "http/special_response.h"
#include "http/variables.h"

namespace torii::handlers {

namespace {

using core::iequals;

// Characters that go unescaped in a path: unreserved, sub-delims, ':', '@', '/'.
bool path_safe(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '-': case '.': case '_': case '~': case '!': case '$': case '&': case '\'': case '(':
    case ')': case '*': case '+': case ',': case ';': case '=': case ':': case '@': case '/':
      return true;
    default:
      return false;
  }
}

void append_escaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : s) {
    if (path_safe(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out.append(": ");
  out.append(value);
  out.append("\r\n");
}

// CR or LF in a rendered value would split the request: such a field is left out.
bool safe_value(std::string_view v) { return http::no_cr_lf_nul(v); }

bool is_set_here(const config::ProxyConfig& p, std::string_view name) {
  for (const auto& h : p.set_headers)
    if (iequals(h.name, name)) return true;
  return false;
}

// Fields the client may not pass upstream: hop-by-hop ones (RFC 9110
// 7.6.1) and those the proxy writes itself (Host, framing, Expect).
bool dropped_request_field(const http::Header& h) {
  using T = http::HeaderToken;
  if (http::header_flags(h.token) & http::kHopByHop) return true;
  switch (h.token) {
    case T::connection: case T::keep_alive: case T::proxy_connection: case T::te: case T::trailer:
    case T::transfer_encoding: case T::upgrade: case T::host: case T::content_length: case T::expect:
      return true;
    default:
      return false;
  }
}

// Response fields nginx does not pass by default, and hop-by-hop ones.
bool hidden_by_default(std::string_view name) {
  static constexpr std::string_view kHidden[] = {"date", "server", "x-pad", "x-accel-expires",
                                                 "x-accel-redirect", "x-accel-limit-rate",
                                                 "x-accel-buffering", "x-accel-charset"};
  for (auto h : kHidden)
    if (iequals(h, name)) return true;
  return false;
}

bool listed(const std::vector<std::string>& names, std::string_view name) {
  for (const auto& n : names)
    if (iequals(n, name)) return true;
  return false;
}

// The field names the request's Connection fields list (RFC 9110 7.6.1:
// those fields are meant for this hop only and are not passed on).
void connection_options(const http::RequestHead& req, std::vector<std::string_view>& out) {
  for (const auto& h : req.headers) {
    if (h.token != http::HeaderToken::connection) continue;
    std::string_view list = h.value;
    while (!list.empty()) {
      const size_t comma = list.find(',');
      std::string_view option = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      while (!option.empty() && (option.front() == ' ' || option.front() == '\t')) option.remove_prefix(1);
      while (!option.empty() && (option.back() == ' ' || option.back() == '\t')) option.remove_suffix(1);
      if (!option.empty()) out.push_back(option);
    }
  }
}

bool listed(const std::vector<std::string_view>& names, std::string_view name) {
  for (auto n : names)
    if (iequals(n, name)) return true;
  return false;
}

}  // namespace

std::string upstream_uri(const http::Exchange& ex, const config::ProxyConfig& p) {
  const auto& req = ex.req;
  std::string uri;
  if (p.uri_verbatim) return p.uri;  // proxy_pass with variables gave the whole URI
  if (p.has_uri && !p.uri_from_regex && !ex.location_uri_rewritten) {
    std::string_view path = req.path;
    std::string_view rest = path.size() >= p.location_prefix.size() ? path.substr(p.location_prefix.size()) : "";
    uri = p.uri;
    append_escaped(uri, rest);
  } else if (!ex.is_internal && !req.raw_path.empty()) {
    uri.assign(req.raw_path);
  } else {
    append_escaped(uri, req.path);
  }
  if (uri.empty()) uri = "/";
  if (req.has_query) {
    uri.push_back('?');
    uri.append(req.query);
  }
  return uri;
}

// The client's conditionals and ranges: the cache asks the upstream for
// the whole response (nginx's proxy_cache's default proxy_set_header list).
namespace {
bool cache_drops(const http::Header& h) {
  using T = http::HeaderToken;
  return h.token == T::if_modified_since || h.token == T::if_none_match || h.token == T::if_range ||
         h.token == T::range || iequals(h.name, "if-unmodified-since") || iequals(h.name, "if-match");
}
}  // namespace

RequestHeadInfo build_request_head(const http::Exchange& ex, const config::ProxyConfig& p, const std::string& uri,
                                   RequestBody body, int64_t length, std::string& out,
                                   const cache::UpstreamRequestChanges* cache) {
  RequestHeadInfo info;
  const auto& req = ex.req;
  // One allocation for the usual head: the client's fields, the request
  // line and room for the set fields.
  size_t estimate = out.size() + uri.size() + 320;
  for (const auto& h : req.headers) estimate += h.name.size() + h.value.size() + 4;
  out.reserve(estimate);
  // As nginx: a HEAD the cache turned into GET stays GET; else proxy_method
  // (rendered per request), else the client's method.
  const size_t line_start = out.size();
  if (cache && cache->get_for_head) {
    out.append("GET");
  } else if (!p.method.empty()) {
    http::render(p.method, ex, out);
    if (!safe_value(std::string_view(out).substr(line_start)) || out.find(' ', line_start) != std::string::npos)
      out.resize(line_start);  // a value that would break the request line is not used
  }
  if (out.size() == line_start)
    out.append(req.method_name.empty() ? std::string_view(http::method_name(req.method)) : req.method_name);
  out.push_back(' ');
  out.append(uri);
  out.append(p.http_version >= 11 ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");

  // proxy_set_header fields in config order, then nginx's defaults for
  // the names they did not set (nginx's order), then the client's fields.
  std::string value;
  bool host_set = false;
  bool conn_set = false;
  for (const auto& h : p.set_headers) {
    if (iequals(h.name, "host")) host_set = true;
    if (iequals(h.name, "connection")) conn_set = true;
    value.clear();
    http::render(h.value, ex, value);
    http::line_breaks_to_spaces(value);
    if (value.empty() || !safe_value(value)) continue;  // an empty value removes the field
    if (iequals(h.name, "upgrade")) info.upgrade = true;
    append_field(out, h.name, value);
  }
  if (!host_set) append_field(out, "Host", p.proxy_host);
  if (!conn_set) out.append("Connection: close\r\n");
  if (p.pass_request_headers) {
    std::vector<std::string_view> hop_only;
    connection_options(req, hop_only);
    for (const auto& h : req.headers) {
      if (dropped_request_field(h) || is_set_here(p, h.name) || listed(hop_only, h.name)) continue;
      if (cache && cache->drop_conditionals && cache_drops(h)) continue;
      append_field(out, h.name, h.value);
    }
  }
  if (cache && !cache->if_modified_since.empty()) append_field(out, "If-Modified-Since", cache->if_modified_since);
  if (cache && !cache->if_none_match.empty()) append_field(out, "If-None-Match", cache->if_none_match);
  if (body == RequestBody::length) {
    out.append("Content-Length: ");
    out.append(std::to_string(length));
    out.append("\r\n");
  } else if (body == RequestBody::chunked) {
    out.append("Transfer-Encoding: chunked\r\n");
  }
  out.append("\r\n");
  return info;
}

bool rewrite_redirect(http::Exchange& ex, const config::ProxyConfig& p, std::string& value) {
  using Mode = config::ProxyConfig::RedirectMode;
  if (p.redirect_mode == Mode::off) return false;
  auto try_rule = [&](std::string_view from, std::string_view to) {
    if (from.empty() || value.compare(0, from.size(), from) != 0) return false;
    value = std::string(to) + value.substr(from.size());
    return true;
  };
  if (p.redirect_mode == Mode::default_) {
    // FastCGI, uwsgi and SCGI have no proxy_redirect: their upstream's
    // Location (often a path, as PHP apps send it) passes as it came.
    if (p.url.empty()) return false;
    // "default", as nginx: with a URI part the proxy_pass URL becomes the
    // location's prefix; without one the URL's root becomes "/", so the
    // upstream's address never reaches the client.
    if (p.has_uri) return try_rule(p.url, p.location_prefix);
    return try_rule(p.url + "/", "/");
  }
  for (const auto& r : p.redirects)
    if (apply_rewrite_rule(ex, r, RuleMatch::prefix, value)) return true;
  return false;
}

namespace {

// Refresh ("5; url=http://backend/next"): as nginx, proxy_redirect
// rewrites the URL after the first "url=" (in any case), and a value
// without one stays as it is.
std::string rewrite_refresh(http::Exchange& ex, const config::ProxyConfig& p, std::string_view value) {
  size_t at = std::string_view::npos;
  for (size_t i = 0; i + 4 <= value.size(); ++i)
    if (iequals(value.substr(i, 4), "url=")) {
      at = i + 4;
      break;
    }
  if (at == std::string_view::npos) return std::string(value);
  std::string url(value.substr(at));
  if (!rewrite_redirect(ex, p, url)) return std::string(value);
  return std::string(value.substr(0, at)) + url;
}

}  // namespace

int accel_buffering(const config::ProxyConfig& p, const http1::ParsedResponse& r) {
  if (p.ignore_headers & config::kIgnoreXAccelBuffering) return -1;
  int verdict = -1;
  for (const auto& h : r.headers) {
    if (!iequals(h.name, "x-accel-buffering")) continue;
    if (iequals(h.value, "yes")) verdict = 1;
    else if (iequals(h.value, "no")) verdict = 0;
  }
  return verdict;
}

std::string_view accel_redirect_target(const config::ProxyConfig& p, const http1::ParsedResponse& r) {
  if (p.ignore_headers & config::kIgnoreXAccelRedirect) return {};
  for (const auto& h : r.headers)
    if (iequals(h.name, "x-accel-redirect")) return h.value;
  return {};
}

void accel_redirect_fields(http::Exchange& ex, const config::ProxyConfig& p, const http1::ParsedResponse& r,
                           std::vector<std::pair<std::string, std::string>>& out) {
  static constexpr std::string_view kCarried[] = {"content-type", "set-cookie",   "content-disposition",
                                                  "cache-control", "expires",     "accept-ranges"};
  for (const auto& h : r.headers) {
    for (auto name : kCarried) {
      if (!iequals(h.name, name)) continue;
      out.emplace_back(std::string(h.name), std::string(h.value));
      if (name == "set-cookie") rewrite_set_cookie(ex, p, out.back().second);
      break;
    }
  }
}

bool field_passes(const config::ProxyConfig& p, std::string_view name) {
  static constexpr std::string_view kHopByHop[] = {"connection", "keep-alive", "proxy-connection", "te",
                                                   "trailer",    "transfer-encoding", "upgrade", "content-length"};
  for (auto h : kHopByHop)
    if (iequals(h, name)) return false;
  if (hidden_by_default(name) && !listed(p.pass_headers, name)) return false;
  return !listed(p.hide_headers, name);
}

void build_response_head(http::Exchange& ex, const config::ProxyConfig& p, const http1::ParsedResponse& r,
                         http1::BodyFraming framing, http::ResponseHead& out) {
  using T = http::HeaderToken;
  out.status = r.status;
  out.reason.assign(r.reason);
  out.reason_status = r.status;
  const bool upgrade = r.status == 101;
  // Room for the upstream's fields and what send_head adds (add_header,
  // Server, Date): one allocation instead of a growth per field.
  out.headers.reserve(out.headers.size() + r.headers.size() + ex.settings().add_headers.size() + 2);
  for (const auto& h : r.headers) {
    switch (h.token) {
      case T::connection:
      case T::upgrade:
        if (!upgrade) continue;
        break;
      case T::keep_alive: case T::proxy_connection: case T::te: case T::trailer: case T::transfer_encoding:
      case T::content_length:
        continue;
      default:
        break;
    }
    if (iequals(h.name, "x-accel-limit-rate") && !(p.ignore_headers & config::kIgnoreXAccelLimitRate)) {
      // The response's pace, as nginx's: a number of bytes a second.
      uint64_t v = 0;
      if (config::parse_number(h.value, v)) out.accel_limit_rate = int64_t(v);
    }
    if (iequals(h.name, "x-accel-charset") && !(p.ignore_headers & config::kIgnoreXAccelCharset))
      out.accel_charset.assign(h.value);
    if (hidden_by_default(h.name)) {
      if (!listed(p.pass_headers, h.name)) continue;
      if (iequals(h.name, "server") || iequals(h.name, "date")) out.has_upstream_server_or_date = true;
    }
    if (listed(p.hide_headers, h.name)) continue;
    if (iequals(h.name, "location")) {
      std::string v(h.value);
      // As nginx: a Location that proxy_redirect rewrote to a path is made
      // absolute on the client's scheme, host and port; one the upstream
      // sent relative stays as it is.
      if (rewrite_redirect(ex, p, v)) v = http::absolute_location(ex, v);
      out.add(std::string(h.name), std::move(v));
      continue;
    }
    if (iequals(h.name, "refresh")) {
      out.add(std::string(h.name), rewrite_refresh(ex, p, h.value));
      continue;
    }
    if (iequals(h.name, "set-cookie")) {
      std::string v(h.value);
      rewrite_set_cookie(ex, p, v);
      out.add(std::string(h.name), std::move(v));
      continue;
    }
    out.add(std::string(h.name), std::string(h.value));
  }
  if (framing == http1::BodyFraming::length || (ex.header_only && r.content_length >= 0 && !upgrade))
    out.content_length = r.content_length;
  else if (framing == http1::BodyFraming::none && !ex.header_only && r.status != 204 && r.status != 304 && !upgrade &&
           r.status >= 200)
    out.content_length = 0;
}

}  // namespace torii::handlers
