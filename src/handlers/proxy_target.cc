// proxy_pass with variables, nginx's way: the URL is rendered per request;
// a host that names an upstream {} (or the group an address-only
// proxy_pass made) uses it; an address literal is used as is; any other
// name goes to the location's `resolver` (dns/resolver.h), asynchronously,
// and its addresses become a round-robin group for this request. A URI
// part replaces the request's whole URI; without one the client's URI
// goes as it came. fastcgi_pass, scgi_pass and uwsgi_pass with variables
// take the same way with an address ("host:port", "unix:/path", a group's
// name) in place of the URL.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstring>

#include "config/proxy_config.h"
#include "config/upstream_config.h"
#include "core/ascii.h"
#include "dns/resolver.h"
#include "handlers/proxy.h"
#include "handlers/upstream_codec.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "net/address.h"
#include "upstream/upstreams.h"

namespace torii::handlers {

namespace {

using config::ProxyConfig;
using config::UpstreamGroupConfig;

using core::iequals;

using MakeCodec = std::function<std::unique_ptr<UpstreamCodec>()>;  // empty: HTTP

struct Target {
  std::string host;       // without brackets
  std::string authority;  // as written: "app:8080", "[::1]:81", "app"
  uint16_t port = 80;
  bool no_port = true;
  bool https = false;
  std::string uri;        // empty: none given
  std::string unix_path;  // a gateway's "unix:/path"
};

bool parse_authority(std::string_view authority, Target& t, std::string& why);
bool parse_gateway_target(std::string_view addr, Target& t, std::string& why);

// "http[s]://host[:port][/uri]"; false (with the reason) when unusable.
bool parse_target(std::string_view url, Target& t, std::string& why) {
  t.https = url.size() > 8 && iequals(url.substr(0, 8), "https://");
  if (!t.https && (url.size() <= 7 || !iequals(url.substr(0, 7), "http://"))) {
    why = "invalid URL prefix in \"" + std::string(url) + "\"";
    return false;
  }
  if (t.https) t.port = 443;
  std::string_view rest = url.substr(t.https ? 8 : 7);
  if (rest.size() > 5 && iequals(rest.substr(0, 5), "unix:")) {  // "unix:/path[:/uri]"
    const size_t colon = rest.find(':', 5);
    if (!parse_gateway_target(rest.substr(0, colon), t, why)) return false;
    if (colon != std::string_view::npos) t.uri = std::string(rest.substr(colon + 1));
    return true;
  }
  size_t end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, end);
  if (end != std::string_view::npos) {
    t.uri = std::string(rest.substr(end));
    if (t.uri[0] == '?') t.uri.insert(0, "/");
  }
  return parse_authority(authority, t, why);
}

// A gateway's address: "[uwsgi://]host[:port]", "unix:/path".
bool parse_gateway_target(std::string_view addr, Target& t, std::string& why) {
  if (addr.size() > 8 && iequals(addr.substr(0, 8), "uwsgi://")) addr.remove_prefix(8);
  if (addr.size() > 5 && iequals(addr.substr(0, 5), "unix:")) {
    t.authority = std::string(addr);
    t.unix_path = std::string(addr.substr(5));
    if (t.unix_path.size() >= sizeof(sockaddr_un::sun_path)) {
      why = "too long path in the unix domain socket in upstream \"" + t.authority + "\"";
      return false;
    }
    return true;
  }
  if (addr.find('/') != std::string_view::npos) {
    why = "invalid host in upstream \"" + std::string(addr) + "\"";
    return false;
  }
  return parse_authority(addr, t, why);
}

bool parse_authority(std::string_view authority, Target& t, std::string& why) {
  t.authority = std::string(authority);
  std::string_view host = authority;
  std::string_view port;
  if (!host.empty() && host[0] == '[') {
    size_t close = host.find(']');
    if (close == std::string_view::npos) {
      why = "invalid host in upstream \"" + std::string(authority) + "\"";
      return false;
    }
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') {
        why = "invalid host in upstream \"" + std::string(authority) + "\"";
        return false;
      }
      port = host.substr(close + 2);
    }
    host = host.substr(1, close - 1);
  } else if (size_t colon = host.find(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (host.empty()) {
    why = "no host in upstream \"" + std::string(authority) + "\"";
    return false;
  }
  if (authority.find(':') != std::string_view::npos && (authority.back() != ']')) {
    unsigned p = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || p > 65535) {
        p = 0;
        break;
      }
      p = p * 10 + unsigned(c - '0');
    }
    if (p == 0 || p > 65535) {
      why = "invalid port in upstream \"" + std::string(authority) + "\"";
      return false;
    }
    t.port = static_cast<uint16_t>(p);
    t.no_port = false;
  }
  t.host = std::string(host);
  return true;
}

// An upstream {} named like the host (when no port is given), or the
// group a plain proxy_pass made for the same host and port.
std::shared_ptr<const UpstreamGroupConfig> find_group(const config::Config& cfg, const Target& t) {
  const std::string with_port = t.authority.find(':') != std::string::npos || t.authority.back() == ']'
                                    ? t.authority
                                    : t.authority + (t.https ? ":443" : ":80");
  for (const auto& u : cfg.upstreams) {
    if (!u->implicit && t.no_port && iequals(u->name, t.host)) return u;
  }
  for (const auto& u : cfg.upstreams) {
    if (!u->implicit) continue;
    if (iequals(u->name, t.authority) || iequals(u->name, with_port)) return u;
  }
  return nullptr;
}

// A literal IPv4/IPv6 address, with the port set, or a unix socket.
bool literal_address(const Target& t, dns::Address& out) {
  out = {};
  if (!t.unix_path.empty()) {
    return net::unix_address(t.unix_path, out.addr, out.len);
  }
  sockaddr_in s4{};
  if (inet_pton(AF_INET, t.host.c_str(), &s4.sin_addr) == 1) {
    s4.sin_family = AF_INET;
    s4.sin_port = htons(t.port);
    std::memcpy(&out.addr, &s4, sizeof s4);
    out.len = sizeof s4;
    return true;
  }
  sockaddr_in6 s6{};
  if (inet_pton(AF_INET6, t.host.c_str(), &s6.sin6_addr) == 1) {
    s6.sin6_family = AF_INET6;
    s6.sin6_port = htons(t.port);
    std::memcpy(&out.addr, &s6, sizeof s6);
    out.len = sizeof s6;
    return true;
  }
  return false;
}

// A group for this request only: the addresses, round robin, no pool.
std::shared_ptr<upstream::Group> group_of(http::Exchange& ex, const Target& t, std::vector<dns::Address> addrs) {
  auto g = std::make_shared<UpstreamGroupConfig>();
  g->name = t.authority;
  g->implicit = true;
  for (auto& a : addrs) {
    if (a.addr.ss_family == AF_INET) reinterpret_cast<sockaddr_in&>(a.addr).sin_port = htons(t.port);
    if (a.addr.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6&>(a.addr).sin6_port = htons(t.port);
    config::UpstreamServer sv;
    sv.name = net::address_with_port(a.addr);
    sv.addr = a.addr;
    sv.addr_len = a.len;
    g->servers.push_back(std::move(sv));
  }
  return std::make_shared<upstream::Group>(*ex.services().loop, std::move(g));
}

// The request's own copy of the location's proxy settings, with what the
// rendered URL says.
std::shared_ptr<const ProxyConfig> config_for(const ProxyConfig& cfg, const Target& t,
                                              std::shared_ptr<const UpstreamGroupConfig> group, bool gateway) {
  auto p = std::make_shared<ProxyConfig>(cfg);
  p->upstream = std::move(group);
  if (gateway) return p;  // the address is all the request's own
  p->proxy_host = t.unix_path.empty() ? t.authority : "localhost";  // nginx's Host for a socket
  const std::string_view default_port = t.https ? ":443" : ":80";
  if (p->proxy_host.size() > default_port.size() && p->proxy_host.ends_with(default_port))
    p->proxy_host.resize(p->proxy_host.size() - default_port.size());
  p->ssl = t.https;  // its TLS context was built at load for the location
  p->has_uri = !t.uri.empty();
  p->uri = t.uri;
  p->uri_verbatim = !t.uri.empty();
  // nginx makes no default proxy_redirect rule for a URL with variables.
  if (p->redirect_mode == ProxyConfig::RedirectMode::default_) p->redirect_mode = ProxyConfig::RedirectMode::off;
  return p;
}

void start(http::Exchange& ex, const ProxyConfig& cfg, const Target& t, std::shared_ptr<upstream::Group> group,
           const MakeCodec& make_codec) {
  auto owned = config_for(cfg, t, group->cfg, bool(make_codec));
  if (make_codec) {
    const ProxyConfig& ref = *owned;
    start_upstream(ex, ref, std::move(group), make_codec(), std::move(owned));
    return;
  }
  ex.proxy_host = owned->proxy_host;
  const ProxyConfig& ref = *owned;
  start_proxy(ex, ref, std::move(group), std::move(owned));
}

// The answer is an error response: at the end of the turn, as the proxy's
// own errors, so error_page may proxy again.
void fail(http::Exchange& ex, int status) {
  struct Failed final : http::Exchange::HandlerState {
    std::shared_ptr<char> alive = std::make_shared<char>();
  };
  auto state = std::make_unique<Failed>();
  std::weak_ptr<char> alive = state->alive;
  ex.handler_state = std::move(state);
  http::Exchange* e = &ex;
  ex.services().loop->defer([e, alive, status] {
    if (alive.expired() || e->finished() || e->head_sent()) return;
    http::send_error(*e, status);
  });
}

void start_resolved(http::Exchange& ex, const ProxyConfig& cfg, const Target& t, const dns::Answer& a,
                    const MakeCodec& make_codec) {
  if (a.state != 0) {
    TORII_LOG_EX(ex, error, "%s could not be resolved (%d: %s)%s", t.host.c_str(), a.state, dns::state_text(a.state),
              http::log_context(ex).c_str());
    fail(ex, 502);
    return;
  }
  start(ex, cfg, t, group_of(ex, t, a.addrs), make_codec);
}

// Waiting for the resolver; dropped (and the wait with it) if the client goes.
struct WaitingForName final : http::Exchange::HandlerState {
  std::shared_ptr<dns::Lookup> lookup;
};

// The target found, resolved or refused, then the session.
void serve_target(http::Exchange& ex, const ProxyConfig& cfg, const Target& t, const MakeCodec& make_codec) {
  if (auto named = find_group(*ex.config, t)) {
    start(ex, cfg, t, ex.services().upstreams->group(named), make_codec);
    return;
  }
  if (make_codec && t.no_port && t.unix_path.empty()) {  // a gateway's address has no default port
    TORII_LOG_EX(ex, error, "no port in upstream \"%s\"%s", t.authority.c_str(), http::log_context(ex).c_str());
    fail(ex, 500);
    return;
  }
  if (dns::Address a; literal_address(t, a)) {
    start(ex, cfg, t, group_of(ex, t, {a}), make_codec);
    return;
  }
  const auto& settings = ex.settings();
  if (!settings.resolver || !ex.services().resolvers) {
    TORII_LOG_EX(ex, error, "no resolver defined to resolve %s%s", t.host.c_str(), http::log_context(ex).c_str());
    fail(ex, 502);
    return;
  }
  dns::Resolver& resolver = ex.services().resolvers->get(*settings.resolver);
  if (const dns::Answer* cached = resolver.cached(t.host)) {
    start_resolved(ex, cfg, t, *cached, make_codec);
    return;
  }
  auto wait = std::make_unique<WaitingForName>();
  http::Exchange* e = &ex;
  // `cfg` lives in the exchange's config, which the exchange holds.
  wait->lookup = resolver.resolve(t.host, settings.resolver_timeout.count(), [e, &cfg, t, make_codec](const dns::Answer& a) {
    start_resolved(*e, cfg, t, a, make_codec);
  });
  ex.handler_state = std::move(wait);
}

// The URL or address rendered, taken apart by `parse`, then served.
void serve_rendered(http::Exchange& ex, const ProxyConfig& cfg,
                    bool (*parse)(std::string_view, Target&, std::string&), const MakeCodec& make_codec) {
  const std::string rendered = http::render(cfg.url_template, ex);
  Target t;
  std::string why;
  if (!parse(rendered, t, why)) {
    TORII_LOG_EX(ex, error, "%s%s", why.c_str(), http::log_context(ex).c_str());
    fail(ex, 500);
    return;
  }
  serve_target(ex, cfg, t, make_codec);
}

}  // namespace

void serve_proxy_with_variables(http::Exchange& ex, const ProxyConfig& cfg) {
  serve_rendered(ex, cfg, parse_target, MakeCodec());
}

void serve_gateway_with_variables(http::Exchange& ex, const ProxyConfig& cfg, MakeCodec make_codec) {
  serve_rendered(ex, cfg, parse_gateway_target, make_codec);
}

}  // namespace torii::handlers
