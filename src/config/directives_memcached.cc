// The memcached module's directives (memcached_pass, memcached_gzip_flag,
// the timeouts, buffer, bind and next_upstream family), with nginx's names,
// contexts and defaults. The settings are a CgiConfig like the gateway
// modules' (its upstream part is the proxy's), set through the shared
// setters of directives_cgi.cc; what nginx's module fixes in code (no
// buffering, no request headers or body, 404 always intercepted, ranges
// forced) is set with memcached_pass.
#include "config/directives_cgi.h"
#include "core/quote.h"
#include "config/upstream_config.h"

namespace torii::config {

namespace {

using S = cgi::For<&LocationSettings::memcached>;
constexpr cgi::Member kMember = &LocationSettings::memcached;
constexpr uint16_t kHSL = kHttp | kServer | kLocation;

bool names_group(Compiler& c, std::string_view name) {
  for (const auto& u : c.cfg().upstreams)
    if (!u->implicit && u->name == name) return true;
  return false;
}

// "memcached_pass ADDRESS:PORT | unix:PATH | GROUP": no scheme, and no
// default port (nginx's words for each).
Status set_pass(Compiler& c, Scope& s, const Node& n) {
  const std::string_view addr = n.args[0];
  const bool unix_path = addr.substr(0, 5) == "unix:";
  if (!unix_path && addr.find("://") != std::string_view::npos)
    return node_error(n, "invalid host in upstream " + q(addr));
  const bool has_port = addr.find(':') != std::string_view::npos && addr.back() != ']';
  if (!unix_path && !has_port && !names_group(c, addr)) return node_error(n, "no port in upstream " + q(addr));
  auto group = upstream_for_address(c, addr, n);
  if (!group) return Error{group.error()};
  // nginx reads the variable by name: it must exist somewhere in the
  // config (`set $memcached_key ...`, a map), else the load fails.
  auto key = compile_template("$memcached_key");
  if (!key) return node_error(n, key.error());
  auto& cfg = cgi::editable(s, kMember);
  cfg.upstream.upstream = std::move(*group);
  cfg.memcached_key = std::move(*key);
  ProxyConfig& u = cfg.upstream;
  u.buffering = false;
  u.request_buffering = true;
  u.pass_request_headers = false;
  u.pass_request_body = false;
  u.intercept_errors = true;
  u.intercept_404 = true;
  u.force_ranges = true;
  u.ignore_client_abort = false;
  return Ok{};
}

// nginx's names for this module: invalid_response and not_found.
Status set_next_upstream(Compiler&, Scope& s, const Node& n) {
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"error", kNextError},
      {"timeout", kNextTimeout},
      {"invalid_response", kNextInvalidHeader},
      {"not_found", kNextHttp404},
  };
  uint32_t mask = 0;
  bool off = false;
  for (const auto& a : n.args) {
    if (a == "off") {
      off = true;
      continue;
    }
    const auto* it = std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& k) { return k.first == a; });
    if (it == std::end(kNames)) return node_error(n, "invalid value " + q(a) + " in " + q(n.name) + " directive");
    mask |= it->second;
  }
  cgi::editable(s, kMember).upstream.next_upstream = off ? 0 : mask;  // "off" anywhere wins, as nginx's merge
  return Ok{};
}

// A number of bits; nginx's ngx_conf_set_num_slot words.
Status set_gzip_flag(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > uint64_t(INT64_MAX)) return node_error(n, q(n.name) + " directive invalid number");
  cgi::editable(s, kMember).gzip_flag = v;
  return Ok{};
}

const DirectiveSpec kMemcachedDirectives[] = {
    {"memcached_pass", kLocation | kLocationIf, kArgs1, true, false, kMain, &set_pass},
    {"memcached_bind", kHSL, kArgs1 | kArgs2, true, false, kMain, &S::bind},
    {"memcached_socket_keepalive", kHSL, kFlag, true, false, kMain, &S::flag<&ProxyConfig::socket_keepalive>},
    {"memcached_connect_timeout", kHSL, kArgs1, true, false, kMain, &S::timeout<&ProxyConfig::connect_timeout>},
    {"memcached_send_timeout", kHSL, kArgs1, true, false, kMain, &S::timeout<&ProxyConfig::send_timeout>},
    {"memcached_read_timeout", kHSL, kArgs1, true, false, kMain, &S::timeout<&ProxyConfig::read_timeout>},
    {"memcached_buffer_size", kHSL, kArgs1, true, false, kMain, &S::size<&ProxyConfig::buffer_size>},
    {"memcached_next_upstream", kHSL, kArgs1More, true, false, kMain, &set_next_upstream},
    {"memcached_next_upstream_tries", kHSL, kArgs1, true, false, kMain, &S::next_tries},
    {"memcached_next_upstream_timeout", kHSL, kArgs1, true, false, kMain,
     &S::timeout<&ProxyConfig::next_upstream_timeout>},
    {"memcached_gzip_flag", kHSL, kArgs1, true, false, kMain, &set_gzip_flag},
};

}  // namespace

std::span<const DirectiveSpec> memcached_directives() { return kMemcachedDirectives; }

}  // namespace torii::config
