#include "config/directives_cgi.h"
#include "core/quote.h"

#include <algorithm>

#include "config/upstream_bind.h"
#include "config/upstream_config.h"

namespace torii::config {

namespace cgi {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

CgiConfig& editable(Scope& s, Member m) {
  auto& slot = s.settings->*m;
  auto copy = slot ? std::make_shared<CgiConfig>(*slot) : std::make_shared<CgiConfig>();
  CgiConfig* raw = copy.get();
  slot = std::move(copy);
  return *raw;
}

bool first_here(Scope& s, uint32_t bit) {
  const bool first = !(s.cgi_here & bit);
  s.cgi_here |= bit;
  return first;
}

Status set_pass(Compiler& c, Scope& s, const Node& n, Member m, std::string_view strip_scheme) {
  std::string_view host = n.args[0];
  if (host.find('$') != std::string_view::npos) {
    // Rendered and taken apart per request (handlers/proxy_target.cc).
    if (!std::string_view(strip_scheme).empty() && strip_scheme != "uwsgi://")
      return node_error(n, "variables in " + q(n.name) + " over TLS are not supported");
    auto t = compile_template(host);
    if (!t) return node_error(n, t.error());
    auto& cfg = editable(s, m).upstream;
    cfg.upstream.reset();
    cfg.url_template = std::move(*t);
    cfg.url = std::string(host);
    return Ok{};
  }
  if (!strip_scheme.empty() && host.substr(0, strip_scheme.size()) == strip_scheme) host.remove_prefix(strip_scheme.size());
  // "unix:///run/app.sock" (Django's uwsgi example) is a path with extra slashes.
  if (host.substr(0, 5) != "unix:" && host.find("://") != std::string_view::npos) return invalid_value(n, n.args[0]);
  if (host.empty()) return node_error(n, "no host in " + q(n.args[0]));
  auto group = upstream_for_address(c, host, n);
  if (!group) return Error{group.error()};
  editable(s, m).upstream.upstream = std::move(*group);
  return Ok{};
}

Status set_param(Scope& s, const Node& n, Member m, uint32_t bit) {
  if (n.args.size() == 3 && n.args[2] != "if_not_empty") return invalid_value(n, n.args[2]);
  auto value = compile_template(n.args[1]);
  if (!value) return node_error(n, value.error());
  const bool first = first_here(s, bit);
  auto& cfg = editable(s, m);
  if (first) cfg.params.clear();
  cfg.params.push_back({n.args[0], std::move(*value), n.args.size() == 3});
  return Ok{};
}

Status set_name_list(Scope& s, const Node& n, Member m, std::vector<std::string> ProxyConfig::*list, uint32_t bit) {
  const bool first = first_here(s, bit);
  auto& cfg = editable(s, m);
  if (first) (cfg.upstream.*list).clear();
  (cfg.upstream.*list).push_back(lower(n.args[0]));
  return Ok{};
}

Status set_timeout(Scope& s, const Node& n, Member m, Ms ProxyConfig::*f) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  editable(s, m).upstream.*f = Ms(ms);
  return Ok{};
}

Status set_flag(Scope& s, const Node& n, Member m, bool ProxyConfig::*f) {
  editable(s, m).upstream.*f = n.args[0] == "on";
  return Ok{};
}

Status set_size(Scope& s, const Node& n, Member m, size_t ProxyConfig::*f) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v) || v == 0) return invalid_value(n, n.args[0]);
  editable(s, m).upstream.*f = static_cast<size_t>(v);
  return Ok{};
}

Status set_buffers(Scope& s, const Node& n, Member m) {
  uint64_t num = 0;
  int64_t size = 0;
  if (!parse_number(n.args[0], num) || num < 2 || num > 1024) return invalid_value(n, n.args[0]);
  if (!parse_size(n.args[1], size) || size == 0) return invalid_value(n, n.args[1]);
  auto& p = editable(s, m).upstream;
  p.buffers_number = num;
  p.buffers_size = static_cast<size_t>(size);
  return Ok{};
}

// nginx's list for fastcgi/uwsgi_next_upstream (no http_502/http_504 there).
Status set_next_upstream(Scope& s, const Node& n, Member m) {
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"error", kNextError},       {"timeout", kNextTimeout},   {"invalid_header", kNextInvalidHeader},
      {"http_500", kNextHttp500},  {"http_503", kNextHttp503},  {"http_403", kNextHttp403},
      {"http_404", kNextHttp404},  {"http_429", kNextHttp429},  {"non_idempotent", kNextNonIdempotent},
  };
  uint32_t mask = 0;
  bool off = false;  // "off" among other values wins, as nginx's merge
  for (const auto& a : n.args) {
    if (a == "off") {
      off = true;
      continue;
    }
    if (a == "updating") continue;  // a cache condition: no cache here
    auto it = std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& k) { return k.first == a; });
    if (it == std::end(kNames)) return invalid_value(n, a);
    mask |= it->second;
  }
  if (off) mask = 0;
  editable(s, m).upstream.next_upstream = mask;
  return Ok{};
}

Status set_next_tries(Scope& s, const Node& n, Member m) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > 1'000'000) return invalid_value(n, n.args[0]);
  editable(s, m).upstream.next_upstream_tries = static_cast<unsigned>(v);
  return Ok{};
}

// nginx's names; the X-Accel-* ones stop the proxy acting on that field,
// all of them take the field out of the cache's decision.
Status parse_ignore_headers(const Node& n, uint32_t& mask) {
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"x-accel-redirect", kIgnoreXAccelRedirect},   {"x-accel-expires", kIgnoreXAccelExpires},
      {"x-accel-limit-rate", kIgnoreXAccelLimitRate}, {"x-accel-buffering", kIgnoreXAccelBuffering},
      {"x-accel-charset", kIgnoreXAccelCharset},     {"expires", kIgnoreExpires},
      {"cache-control", kIgnoreCacheControl},        {"set-cookie", kIgnoreSetCookie},
      {"vary", kIgnoreVary}};
  mask = 0;
  for (const auto& a : n.args) {
    const std::string low = lower(a);
    auto it = std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& k) { return k.first == low; });
    if (it == std::end(kNames)) return invalid_value(n, a);
    mask |= it->second;
  }
  return Ok{};
}

Status set_ignore_headers(Scope& s, const Node& n, Member m) {
  uint32_t mask = 0;
  if (Status st = parse_ignore_headers(n, mask); !st) return st;
  editable(s, m).upstream.ignore_headers = mask;
  return Ok{};
}

// Temporary files never happen (memory stays within *_buffers): a valid
// value is all these need.
Status accept_size(const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  return Ok{};
}

Status set_bind(Scope& s, const Node& n, Member m) {
  auto bind = parse_upstream_bind(n);
  if (!bind) return Error{bind.error()};
  editable(s, m).upstream.bind = std::move(*bind);
  return Ok{};
}

Status set_limit_rate(Scope& s, const Node& n, Member m) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  editable(s, m).upstream.limit_rate = static_cast<size_t>(v);
  return Ok{};
}

}  // namespace cgi

void reset_uninherited_cgi(LocationSettings& s) {
  // fastcgi_pass and uwsgi_pass belong to their location, as proxy_pass.
  for (auto member : {&LocationSettings::fastcgi, &LocationSettings::uwsgi, &LocationSettings::scgi,
                        &LocationSettings::grpc, &LocationSettings::memcached}) {
    auto& slot = s.*member;
    if (!slot || !slot->passes()) continue;
    auto copy = std::make_shared<CgiConfig>(*slot);
    copy->upstream.upstream.reset();
    copy->upstream.url_template = Template{};
    slot = std::move(copy);
  }
}

}  // namespace torii::config
