// The proxy module's directives (proxy_pass, proxy_*, upstream {}, map).
// upstream {} and map {} check their own children: an upstream's "server"
// is not the http block's, and a map's lines are keys, not directives.
#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <cstring>

#include "config/directives.h"
#include "core/quote.h"
#include "config/directives_cgi.h"
#include "config/directives_health_check.h"
#include "config/upstream_bind.h"
#include "upstream/live_group.h"
#include "config/nginx_directives.h"
#include "config/map_config.h"
#include "config/proxy_config.h"
#include "config/regex.h"
#include "config/upstream_config.h"
#include "config/upstream_tls_config.h"
#include "net/address.h"

namespace torii::config {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Scope::proxy_here bits: array directives replace what was inherited at
// their first use in a block, as nginx's merge does.
enum : uint32_t {
  kSetHeaderHere = 1,
  kHideHere = 2,
  kPassHere = 4,
  kRedirectHere = 8,
  kCookieDomainHere = 16,
  kCookiePathHere = 32,
  kCookieFlagsHere = 64,
};

// Copy-on-write: settings share their parent's ProxyConfig until changed.
template <typename F>
Status edit(Scope& s, F&& f) {
  auto p = s.settings->proxy ? std::make_shared<ProxyConfig>(*s.settings->proxy) : std::make_shared<ProxyConfig>();
  Status st = f(*p);
  if (!st) return st;
  s.settings->proxy = std::move(p);
  return Ok{};
}

// ---- addresses ---------------------------------------------------------------

struct Resolved {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

// "unix:/path", "[::1]:80", "1.2.3.4:80", "host:80", "host" (port 80).
// A host name may resolve to several addresses: one server each, as nginx.
Result<std::vector<Resolved>> resolve(std::string_view text, const Node& n) {
  std::vector<Resolved> out;
  if (starts_with(text, "unix:")) {
    Resolved r;
    if (!net::unix_address(text.substr(5), r.addr, r.len)) return invalid_value(n, text);
    out.push_back(r);
    return out;
  }
  std::string host;
  std::string port = "80";
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return invalid_value(n, text);
    host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return invalid_value(n, text);
      port = std::string(rest.substr(1));
    }
  } else {
    size_t colon = text.rfind(':');
    host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) port = std::string(text.substr(colon + 1));
  }
  uint64_t p = 0;
  if (!parse_number(port, p) || p == 0 || p > 65535) return node_error(n, "invalid port in " + q(text));
  if (host.empty()) return node_error(n, "no host in " + q(text));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || !res)
    return node_error(n, "host not found in upstream " + q(text));
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    Resolved r;
    std::memcpy(&r.addr, ai->ai_addr, ai->ai_addrlen);
    r.len = ai->ai_addrlen;
    bool dup = std::any_of(out.begin(), out.end(), [&](const Resolved& o) {
      return o.len == r.len && std::memcmp(&o.addr, &r.addr, r.len) == 0;
    });
    if (!dup) out.push_back(r);
  }
  freeaddrinfo(res);
  return out;
}

// `server TEXT resolve`: a host name becomes a template that is resolved
// at run time; an address literal or a unix socket gives none (it is used
// as it is).
Result<std::optional<ResolveTemplate>> resolve_template(std::string_view text, const Node& n) {
  if (starts_with(text, "unix:") || (!text.empty() && text[0] == '[')) return std::optional<ResolveTemplate>{};
  const size_t colon = text.rfind(':');
  std::string host(text.substr(0, colon));
  std::string_view port = colon == std::string_view::npos ? std::string_view("80") : text.substr(colon + 1);
  uint64_t p = 0;
  if (!parse_number(port, p) || p == 0 || p > 65535) return node_error(n, "invalid port in " + q(text));
  if (host.empty()) return node_error(n, "no host in " + q(text));
  in_addr a4{};
  if (inet_pton(AF_INET, host.c_str(), &a4) == 1) return std::optional<ResolveTemplate>{};
  ResolveTemplate t;
  t.name = std::move(host);
  t.written = std::string(text);
  t.port = uint16_t(p);
  return std::optional<ResolveTemplate>(std::move(t));
}

std::string server_name(const Resolved& r, std::string_view written) {
  if (r.addr.ss_family == AF_UNIX) return std::string(written);
  return net::address_with_port(r.addr);
}

// ---- upstream {} -------------------------------------------------------------

}  // namespace

Status upstream_server(UpstreamGroupConfig& g, const Node& n) {
  if (n.args.empty()) return node_error(n, "invalid number of arguments in \"server\" directive");
  UpstreamServer proto;
  bool at_run_time = false;  // `resolve`
  for (size_t i = 1; i < n.args.size(); ++i) {
    std::string_view a = n.args[i];
    uint64_t v = 0;
    int64_t ms = 0;
    if (starts_with(a, "weight=")) {
      if (!parse_number(a.substr(7), v) || v == 0 || v > 1'000'000) return invalid_value(n, a);
      proto.weight = static_cast<unsigned>(v);
    } else if (starts_with(a, "max_fails=")) {
      if (!parse_number(a.substr(10), v) || v > 1'000'000) return invalid_value(n, a);
      proto.max_fails = static_cast<unsigned>(v);
    } else if (starts_with(a, "fail_timeout=")) {
      if (!parse_time_ms(a.substr(13), ms)) return invalid_value(n, a);
      proto.fail_timeout = Ms(ms);
    } else if (starts_with(a, "max_conns=")) {
      if (!parse_number(a.substr(10), v) || v > 1'000'000) return invalid_value(n, a);
      proto.max_conns = static_cast<unsigned>(v);
    } else if (a == "backup") {
      proto.backup = true;
    } else if (a == "down") {
      proto.down = true;
    } else if (a == "drain") {
      proto.drain = true;
    } else if (a == "resolve") {
      at_run_time = true;
    } else if (starts_with(a, "route=") || starts_with(a, "service=") || starts_with(a, "slow_start=")) {
      // service= (DNS SRV records) is not implemented: refused by name.
      return node_error(n, q(a) + " is not yet supported");
    } else {
      return node_error(n, "invalid parameter " + q(a));
    }
  }
  if (at_run_time) {
    auto t = resolve_template(n.args[0], n);
    if (!t) return Error{t.error()};
    if (t->has_value()) {  // a name: its addresses come at run time
      (*t)->proto = proto;
      g.resolves.push_back(std::move(**t));
      return Ok{};
    }
    // An address literal or a unix socket is used as it is, as nginx does.
  }
  auto addrs = resolve(n.args[0], n);
  if (!addrs) return Error{addrs.error()};
  for (const auto& r : *addrs) {
    UpstreamServer s = proto;
    s.name = server_name(r, n.args[0]);
    s.written = n.args[0];
    s.addr = r.addr;
    s.addr_len = r.len;
    g.servers.push_back(std::move(s));
  }
  return Ok{};
}

namespace {

Status set_upstream(Compiler& c, Scope&, const Node& n) {
  auto g = std::make_shared<UpstreamGroupConfig>();
  g->name = n.args[0];
  g->file = n.file ? *n.file : std::string();
  g->line = n.line;
  for (const auto& u : c.cfg().upstreams) {
    if (!u->implicit && u->name == g->name) return node_error(n, "duplicate upstream " + q(g->name));
  }
  using B = UpstreamGroupConfig::Balancer;
  bool balancer_set = false;
  auto set_balancer = [&](const Node& d, B b) -> Status {
    if (balancer_set) return node_error(d, "load balancing method redefined");
    balancer_set = true;
    g->balancer = b;
    return Ok{};
  };
  auto arity = [](const Node& d, size_t lo, size_t hi) -> Status {
    if (d.block) return node_error(d, "directive " + q(d.name) + " is not terminated by \";\"");
    if (d.args.size() < lo || d.args.size() > hi)
      return node_error(d, "invalid number of arguments in " + q(d.name) + " directive");
    return Ok{};
  };
  // The state file holds the whole list, as NGINX Plus's does.
  const bool has_state = std::any_of(n.children.begin(), n.children.end(), [](const Node& d) { return d.name == "state"; });
  for (const auto& d : n.children) {
    Status st = Ok{};
    if (d.name == "server" && has_state) {
      return node_error(d, "\"server\" directive conflicts with \"state\"");
    } else if (d.name == "server") {
      st = arity(d, 1, 32);
      if (st) st = upstream_server(*g, d);
    } else if (d.name == "least_conn") {
      st = arity(d, 0, 0);
      if (st) st = set_balancer(d, B::least_conn);
    } else if (d.name == "ip_hash") {
      st = arity(d, 0, 0);
      if (st) st = set_balancer(d, B::ip_hash);
    } else if (d.name == "hash") {
      st = arity(d, 1, 2);
      if (st) st = set_balancer(d, B::hash);
      if (st) {
        auto t = compile_template(d.args[0]);
        if (!t) return node_error(d, t.error());
        g->hash_key = std::move(*t);
        if (d.args.size() == 2) {
          if (d.args[1] != "consistent") return invalid_value(d, d.args[1]);
          g->consistent = true;
        }
      }
    } else if (d.name == "random") {
      st = arity(d, 0, 2);
      if (st) st = set_balancer(d, B::random);
      if (st && !d.args.empty()) {
        if (d.args[0] != "two") return invalid_value(d, d.args[0]);
        if (d.args.size() == 2 && d.args[1] != "least_conn") return invalid_value(d, d.args[1]);
        g->random_two = true;
      }
    } else if (d.name == "keepalive") {
      st = arity(d, 1, 1);
      uint64_t v = 0;
      if (st && (!parse_number(d.args[0], v) || v == 0 || v > 1'000'000)) return invalid_value(d, d.args[0]);
      g->keepalive = static_cast<unsigned>(v);
    } else if (d.name == "keepalive_timeout") {
      st = arity(d, 1, 1);
      int64_t ms = 0;
      if (st && !parse_time_ms(d.args[0], ms)) return invalid_value(d, d.args[0]);
      g->keepalive_timeout = Ms(ms);
    } else if (d.name == "keepalive_requests") {
      st = arity(d, 1, 1);
      uint64_t v = 0;
      if (st && !parse_number(d.args[0], v)) return invalid_value(d, d.args[0]);
      g->keepalive_requests = v;
    } else if (d.name == "health_check") {
      st = parse_health_check(*g, d);
    } else if (d.name == "state") {
      st = arity(d, 1, 1);
      if (st) st = read_state_file(c, *g, d);
    } else if (d.name == "zone") {
      // Shared-memory zones share state between worker processes; torii's
      // workers keep per-worker state. nginx resolves names at run time
      // only in a group with a zone, so the same config is required here.
      st = arity(d, 1, 2);
      g->zone = true;
    } else if (d.name == "resolver") {
      if (g->resolver) return node_error(d, "\"resolver\" directive is duplicate");
      auto r = parse_resolver(d);
      if (!r) return Error{r.error()};
      g->resolver = std::move(*r);
    } else if (d.name == "resolver_timeout") {
      st = arity(d, 1, 1);
      if (st) {
        auto t = parse_resolver_timeout(d);
        if (!t) return Error{t.error()};
        g->resolver_timeout = *t;
      }
    } else if (d.name == "keepalive_time") {
      st = arity(d, 1, 1);
      int64_t ms = 0;
      if (st && !parse_time_ms(d.args[0], ms)) return invalid_value(d, d.args[0]);
      g->keepalive_time = Ms(ms);
    } else if (d.name == "ntlm" || d.name == "sticky" || d.name == "queue") {
      return node_error(d, q(d.name) + " is not yet supported");
    } else {
      return node_error(d, missing_directive_message(d.name));
    }
    if (!st) return st;
  }
  if (!g->resolves.empty() && !g->zone)
    return node_error(n, "resolving names at run time requires upstream " + q(g->name) + " in " + g->file + ":" +
                             std::to_string(g->line) + " to be in shared memory");
  if (!g->resolves.empty() && !g->state_file.empty())
    return node_error(n, "\"resolve\" in the state file of upstream " + q(g->name) + " is not yet supported");
  // A group with a state file may start empty: the admin API fills it.
  if (g->servers.empty() && g->resolves.empty() && g->state_file.empty())
    return node_error(n, "no servers are inside upstream");
  bool any_primary = std::any_of(g->servers.begin(), g->servers.end(), [](const auto& s) { return !s.backup; }) ||
                     std::any_of(g->resolves.begin(), g->resolves.end(), [](const auto& t) { return !t.proto.backup; });
  if (!any_primary && !(g->servers.empty() && g->resolves.empty()))
    return node_error(n, "no primary servers are inside upstream");
  for (size_t i = 0; i < g->servers.size(); ++i) g->servers[i].id = unsigned(i);
  if (g->balancer != B::round_robin && g->balancer != B::least_conn) {
    for (const auto& s : g->servers)
      if (s.backup) return node_error(n, "backup servers are not allowed with this load balancing method");
    for (const auto& t : g->resolves)
      if (t.proto.backup) return node_error(n, "backup servers are not allowed with this load balancing method");
  }
  if (g->health_check) g->health = std::make_shared<PeerHealth>(g->servers.size());
  // Resolved names change the server list at run time through the same
  // LiveGroup the admin API edits (upstream/name_refresher).
  if (c.cfg().api_enabled || !g->resolves.empty()) upstream::attach_live_group(*g);
  c.cfg().upstreams.push_back(std::move(g));
  return Ok{};
}

}  // namespace

Status finish_upstream_resolvers(Config& cfg, const LocationSettings& http) {
  for (auto& g : cfg.upstreams) {
    if (g->resolves.empty()) continue;
    // Set where the group is still the only owner (the admin API's first
    // snapshot copied it before: it has no use for these fields).
    auto& group = const_cast<UpstreamGroupConfig&>(*g);
    if (!group.resolver) group.resolver = http.resolver;
    if (group.resolver_timeout.count() == 0) group.resolver_timeout = http.resolver_timeout;
    if (!group.resolver)
      return make_error(group.file + ":" + std::to_string(group.line) +
                        ": no resolver defined to resolve names at run time in upstream " + q(group.name) + " in " +
                        group.file + ":" + std::to_string(group.line));
  }
  return Ok{};
}

namespace {

// ---- map {} ------------------------------------------------------------------

Status set_map(Compiler& c, Scope&, const Node& n) {
  auto m = std::make_shared<MapConfig>();
  auto src = compile_template(n.args[0]);
  if (!src) return node_error(n, src.error());
  m->source = std::move(*src);
  std::string_view var = n.args[1];
  if (var.size() < 2 || var[0] != '$') return node_error(n, "invalid variable name " + q(var));
  m->name = std::string(var.substr(1));
  Variable existing;
  if (lookup_variable(m->name, existing) && existing.id != VarId::map_)
    return node_error(n, "the duplicate " + q(m->name) + " variable");
  auto lines = read_map_lines(n, *m, [](const Node& d, std::string_view text, const Regex*) -> Result<Template> {
    auto value = compile_template(text);
    if (!value) return node_error(d, value.error());
    return value;
  });
  if (!lines) return lines;
  auto& maps = c.cfg().maps;
  define_variable(m->name, maps.size());
  maps.push_back(std::move(m));
  return Ok{};
}

// ---- proxy_pass ----------------------------------------------------------------

// proxy_pass with variables: checked at load as a template only; the URL
// is taken apart per request (handlers/proxy_target.cc), as nginx does.
Status set_proxy_pass_variables(Scope& s, const Node& n) {
  auto t = compile_template(n.args[0]);
  if (!t) return node_error(n, t.error());
  const Location* loc = s.location;
  using M = Location::Match;
  bool regex_like = !loc || loc->match == M::regex || loc->match == M::regex_icase || loc->match == M::named;
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.upstream.reset();
    p.url_template = std::move(*t);
    p.ssl = false;  // decided per request by the URL's scheme
    if (!p.tls) p.tls = std::make_shared<UpstreamTlsConfig>();  // in case it renders https://
    p.url = n.args[0];
    p.location_prefix = loc ? loc->pattern : std::string();
    p.uri_from_regex = regex_like;
    return Ok{};
  });
}

Status set_proxy_pass(Compiler& c, Scope& s, const Node& n) {
  std::string_view url = n.args[0];
  if (url.find('$') != std::string_view::npos) return set_proxy_pass_variables(s, n);
  const bool https = starts_with(url, "https://");
  if (!https && !starts_with(url, "http://")) return node_error(n, "invalid URL prefix in " + q(url));
  std::string_view rest = url.substr(https ? 8 : 7);
  std::string_view host;
  std::string_view uri;
  bool has_uri = false;
  if (starts_with(rest, "unix:")) {
    // http://unix:/path/to.sock:/uri; "...sock:" with nothing after the
    // colon has no URI part, as nginx (the request's URI goes as it is).
    size_t colon = rest.find(':', 5);
    host = rest.substr(0, colon);
    if (colon != std::string_view::npos) {
      uri = rest.substr(colon + 1);
      has_uri = !uri.empty();
    }
  } else {
    size_t slash = rest.find('/');
    host = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
      uri = rest.substr(slash);
      has_uri = true;
    }
  }
  if (host.empty()) return node_error(n, "no host in " + q(url) + " of the \"proxy_pass\" directive");

  const Location* loc = s.location;
  using M = Location::Match;
  bool regex_like = !loc || loc->match == M::regex || loc->match == M::regex_icase || loc->match == M::named;
  if (has_uri && (regex_like || s.limit_except || s.ctx == kLocationIf))
    return node_error(n, "\"proxy_pass\" cannot have URI part in location given by regular expression, or inside "
                         "named location, or inside \"if\" statement, or inside \"limit_except\" block");

  auto found = upstream_for_address(c, host, n, https ? 443 : 80);
  if (!found) return Error{found.error()};
  std::shared_ptr<const UpstreamGroupConfig> group = std::move(*found);

  return edit(s, [&](ProxyConfig& p) -> Status {
    p.upstream = group;
    p.url_template = Template{};
    p.url = std::string(url);
    p.ssl = https;
    if (https && !p.tls) p.tls = std::make_shared<UpstreamTlsConfig>();
    std::string h(host);
    const std::string_view default_port = https ? ":443" : ":80";
    if (h.size() > default_port.size() && h.ends_with(default_port)) h.resize(h.size() - default_port.size());
    if (starts_with(h, "unix:")) h = "localhost";
    p.proxy_host = std::move(h);
    p.has_uri = has_uri;
    p.uri = std::string(uri);
    p.location_prefix = loc ? loc->pattern : std::string();
    p.uri_from_regex = regex_like;
    return Ok{};
  });
}

// ---- proxy_* -------------------------------------------------------------------

Status set_http_version(Compiler&, Scope& s, const Node& n) {
  int v = 0;
  if (n.args[0] == "1.0") v = 10;
  else if (n.args[0] == "1.1") v = 11;
  else return invalid_value(n, n.args[0]);
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.http_version = v;
    return Ok{};
  });
}

// proxy_method: the method sent upstream instead of the client's.
Status set_method(Compiler&, Scope& s, const Node& n) {
  auto t = compile_template(n.args[0]);
  if (!t) return node_error(n, t.error());
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.method = std::move(*t);
    return Ok{};
  });
}

Status set_set_header(Compiler&, Scope& s, const Node& n) {
  auto t = compile_template(n.args[1]);
  if (!t) return node_error(n, t.error());
  bool first = !(s.proxy_here & kSetHeaderHere);
  s.proxy_here |= kSetHeaderHere;
  return edit(s, [&](ProxyConfig& p) -> Status {
    if (first) p.set_headers.clear();
    // Every line is a field of its own, in order, as nginx: two lines of
    // one name send both (an empty value leaves its line out), so Jenkins'
    // `Connection $connection_upgrade;` then `Connection "";` still sends
    // the first.
    p.set_headers.push_back({n.args[0], std::move(*t)});
    return Ok{};
  });
}

template <std::vector<std::string> ProxyConfig::*F, uint32_t Bit>
Status set_name_list(Compiler&, Scope& s, const Node& n) {
  bool first = !(s.proxy_here & Bit);
  s.proxy_here |= Bit;
  return edit(s, [&](ProxyConfig& p) -> Status {
    if (first) (p.*F).clear();
    (p.*F).push_back(lower(n.args[0]));
    return Ok{};
  });
}

// The FROM of a proxy_redirect or proxy_cookie_* line: "~REGEX" (caseless
// with "~*", or always for a cookie domain), else a template.
Status rewrite_rule(const Node& n, bool domain, ProxyRedirect& rule) {
  std::string_view from = n.args[0];
  if (starts_with(from, "~")) {
    const bool caseless = domain || starts_with(from, "~*");
    from.remove_prefix(!domain && caseless ? 2 : 1);
    auto re = Regex::compile(from, caseless);
    if (!re) return node_error(n, re.error());
    rule.regex = std::move(*re);
  } else {
    if (domain && starts_with(from, ".")) from.remove_prefix(1);
    auto t = compile_template(from);
    if (!t) return node_error(n, t.error());
    rule.from = std::move(*t);
  }
  std::string_view to = n.args[1];
  if (domain && !rule.regex && starts_with(to, ".")) to.remove_prefix(1);
  auto t = compile_template(to);
  if (!t) return node_error(n, t.error());
  rule.to = std::move(*t);
  return Ok{};
}

// "proxy_redirect default" among other lines: nginx's rule for the
// proxy_pass above it.
Status default_redirect_rule(const Node& n, const ProxyConfig& p, ProxyRedirect& rule) {
  if (!p.url_template.empty())
    return node_error(n, "\"proxy_redirect default\" cannot be used with \"proxy_pass\" directive with variables");
  if (p.url.empty()) return node_error(n, "\"proxy_redirect default\" should be placed after the \"proxy_pass\" directive");
  auto from = compile_template(p.has_uri ? p.url : p.url + "/");
  auto to = compile_template(p.has_uri ? p.location_prefix : std::string("/"));
  if (!from || !to) return node_error(n, "invalid \"proxy_redirect default\"");
  rule.from = std::move(*from);
  rule.to = std::move(*to);
  return Ok{};
}

Status set_redirect(Compiler&, Scope& s, const Node& n) {
  bool first = !(s.proxy_here & kRedirectHere);
  s.proxy_here |= kRedirectHere;
  using Mode = ProxyConfig::RedirectMode;
  if (n.args.size() == 1) {
    if (n.args[0] != "default" && n.args[0] != "off" && n.args[0] != "false") return invalid_value(n, n.args[0]);
    bool off = n.args[0] != "default";
    if (off || first) {
      return edit(s, [&](ProxyConfig& p) -> Status {
        p.redirects.clear();
        p.redirect_mode = off ? Mode::off : Mode::default_;
        return Ok{};
      });
    }
  }
  ProxyRedirect rule;
  const bool is_default = n.args.size() == 1;
  if (!is_default) {
    if (Status st = rewrite_rule(n, false, rule); !st) return st;
  }
  return edit(s, [&](ProxyConfig& p) -> Status {
    // Lines of one block make one list, tried in order; "default" among
    // them is the rule nginx derives from proxy_pass.
    const bool had_default = !first && p.redirect_mode == Mode::default_;
    if (first || p.redirect_mode != Mode::list) p.redirects.clear();
    if (had_default) {
      ProxyRedirect d;
      if (Status st = default_redirect_rule(n, p, d); !st) return st;
      p.redirects.push_back(std::move(d));
    }
    if (is_default) {
      if (Status st = default_redirect_rule(n, p, rule); !st) return st;
    }
    p.redirect_mode = Mode::list;
    p.redirects.push_back(std::move(rule));
    return Ok{};
  });
}

// proxy_cookie_domain / proxy_cookie_path: FROM TO lines, or "off".
template <std::vector<ProxyRedirect> ProxyConfig::*F, uint32_t Bit>
Status set_cookie_rewrite(Compiler&, Scope& s, const Node& n) {
  bool first = !(s.proxy_here & Bit);
  s.proxy_here |= Bit;
  if (n.args.size() == 1) {
    if (n.args[0] != "off") return node_error(n, "invalid parameter " + q(n.args[0]));
    return edit(s, [&](ProxyConfig& p) -> Status {
      (p.*F).clear();
      return Ok{};
    });
  }
  ProxyRedirect rule;
  if (Status st = rewrite_rule(n, F == &ProxyConfig::cookie_domains, rule); !st) return st;
  return edit(s, [&](ProxyConfig& p) -> Status {
    if (first) (p.*F).clear();
    (p.*F).push_back(std::move(rule));
    return Ok{};
  });
}

Status set_cookie_flags(Compiler&, Scope& s, const Node& n) {
  bool first = !(s.proxy_here & kCookieFlagsHere);
  s.proxy_here |= kCookieFlagsHere;
  if (n.args.size() == 1) {
    if (n.args[0] != "off") return node_error(n, "invalid parameter " + q(n.args[0]));
    return edit(s, [&](ProxyConfig& p) -> Status {
      p.cookie_flags.clear();
      return Ok{};
    });
  }
  CookieFlags line;
  if (starts_with(n.args[0], "~")) {
    auto re = Regex::compile(std::string_view(n.args[0]).substr(1), true);
    if (!re) return node_error(n, re.error());
    line.regex = std::move(*re);
  } else {
    auto t = compile_template(n.args[0]);
    if (!t) return node_error(n, t.error());
    line.name = std::move(*t);
  }
  static constexpr std::string_view kFlags[] = {"secure",          "nosecure",     "httponly",      "nohttponly",
                                                "samesite=strict", "samesite=lax", "samesite=none", "nosamesite"};
  for (size_t i = 1; i < n.args.size(); ++i) {
    const std::string& a = n.args[i];
    if (a.find('$') == std::string::npos &&
        std::find(std::begin(kFlags), std::end(kFlags), lower(a)) == std::end(kFlags))
      return node_error(n, "invalid parameter " + q(a));
    auto t = compile_template(a);
    if (!t) return node_error(n, t.error());
    line.flags.push_back(std::move(*t));
  }
  return edit(s, [&](ProxyConfig& p) -> Status {
    if (first) p.cookie_flags.clear();
    p.cookie_flags.push_back(std::move(line));
    return Ok{};
  });
}

template <Ms ProxyConfig::*F>
Status set_timeout(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.*F = Ms(ms);
    return Ok{};
  });
}

template <bool ProxyConfig::*F>
Status set_flag(Compiler&, Scope& s, const Node& n) {
  bool on = n.args[0] == "on";
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.*F = on;
    return Ok{};
  });
}

template <size_t ProxyConfig::*F>
Status set_size(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v) || v == 0) return invalid_value(n, n.args[0]);
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.*F = static_cast<size_t>(v);
    return Ok{};
  });
}

// proxy_set_body STRING: variables rendered per request.
Status set_body(Compiler&, Scope& s, const Node& n) {
  auto t = compile_template(n.args[0]);
  if (!t) return node_error(n, t.error());
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.has_set_body = true;
    p.set_body = std::move(*t);
    return Ok{};
  });
}

Status set_buffers(Compiler&, Scope& s, const Node& n) {
  uint64_t num = 0;
  int64_t size = 0;
  if (!parse_number(n.args[0], num) || num < 2 || num > 1024) return invalid_value(n, n.args[0]);
  if (!parse_size(n.args[1], size) || size == 0) return invalid_value(n, n.args[1]);
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.buffers_number = num;
    p.buffers_size = static_cast<size_t>(size);
    return Ok{};
  });
}

Status set_next_upstream(Compiler&, Scope& s, const Node& n) {
  uint32_t mask = 0;
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"error", kNextError},         {"timeout", kNextTimeout},   {"invalid_header", kNextInvalidHeader},
      {"http_500", kNextHttp500},    {"http_502", kNextHttp502},  {"http_503", kNextHttp503},
      {"http_504", kNextHttp504},    {"http_403", kNextHttp403},  {"http_404", kNextHttp404},
      {"http_429", kNextHttp429},    {"non_idempotent", kNextNonIdempotent},
  };
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
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.next_upstream = mask;
    return Ok{};
  });
}

Status set_next_tries(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > 1'000'000) return invalid_value(n, n.args[0]);
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.next_upstream_tries = static_cast<unsigned>(v);
    return Ok{};
  });
}

// Temp files never happen (memory stays within proxy_buffers), so these
// only need a valid value.
Status accept_size_or_zero(Compiler&, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  return Ok{};
}

Status set_limit_rate(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.limit_rate = static_cast<size_t>(v);
    return Ok{};
  });
}

Status set_bind(Compiler&, Scope& s, const Node& n) {
  auto bind = parse_upstream_bind(n);
  if (!bind) return Error{bind.error()};
  return edit(s, [&](ProxyConfig& p) -> Status {
    p.bind = std::move(*bind);
    return Ok{};
  });
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

const DirectiveSpec kProxyDirectives[] = {
    {"upstream", kHttp, kArgs1 | kBlock, false, false, kUpstream, &set_upstream},
    // map's lines are keys, checked by set_map; kUpstream asks the generic
    // validation to leave a block's children to its setter.
    {"map", kHttp, kArgs2 | kBlock, false, false, kUpstream, &set_map},
    {"proxy_pass", kLocation | kLocationIf | kLimitExcept, kArgs1, true, false, kMain, &set_proxy_pass},
    {"proxy_http_version", kHSL, kArgs1, true, false, kMain, &set_http_version},
    {"proxy_method", kHSL, kArgs1, true, false, kMain, &set_method},
    {"proxy_set_header", kHSL, kArgs2, false, false, kMain, &set_set_header},
    {"proxy_hide_header", kHSL, kArgs1, false, false, kMain, &set_name_list<&ProxyConfig::hide_headers, kHideHere>},
    {"proxy_pass_header", kHSL, kArgs1, false, false, kMain, &set_name_list<&ProxyConfig::pass_headers, kPassHere>},
    {"proxy_redirect", kHSL, kArgs1 | kArgs2, false, false, kMain, &set_redirect},
    {"proxy_cookie_domain", kHSL, kArgs1 | kArgs2, false, false, kMain,
     &set_cookie_rewrite<&ProxyConfig::cookie_domains, kCookieDomainHere>},
    {"proxy_cookie_path", kHSL, kArgs1 | kArgs2, false, false, kMain,
     &set_cookie_rewrite<&ProxyConfig::cookie_paths, kCookiePathHere>},
    {"proxy_cookie_flags", kHSL, kArgs1More, false, false, kMain, &set_cookie_flags},
    {"proxy_connect_timeout", kHSL, kArgs1, true, false, kMain, &set_timeout<&ProxyConfig::connect_timeout>},
    {"proxy_send_timeout", kHSL, kArgs1, true, false, kMain, &set_timeout<&ProxyConfig::send_timeout>},
    {"proxy_read_timeout", kHSL, kArgs1, true, false, kMain, &set_timeout<&ProxyConfig::read_timeout>},
    {"proxy_buffering", kHSL, kFlag, true, false, kMain, &set_flag<&ProxyConfig::buffering>},
    {"proxy_request_buffering", kHSL, kFlag, true, false, kMain, &set_flag<&ProxyConfig::request_buffering>},
    {"proxy_intercept_errors", kHSL, kFlag, true, false, kMain, &set_flag<&ProxyConfig::intercept_errors>},
    {"proxy_pass_request_headers", kHSL, kFlag, true, false, kMain, &set_flag<&ProxyConfig::pass_request_headers>},
    {"proxy_set_body", kHSL, kArgs1, true, false, kMain, &set_body},
    {"proxy_pass_request_body", kHSL, kFlag, true, false, kMain, &set_flag<&ProxyConfig::pass_request_body>},
    {"proxy_ignore_client_abort", kHSL, kFlag, true, false, kMain, &set_flag<&ProxyConfig::ignore_client_abort>},
    {"proxy_socket_keepalive", kHSL, kFlag, true, false, kMain, &set_flag<&ProxyConfig::socket_keepalive>},
    {"proxy_limit_rate", kHSL, kArgs1, true, false, kMain, &set_limit_rate},
    {"proxy_bind", kHSL, kArgs1 | kArgs2, true, false, kMain, &set_bind},
    {"proxy_buffer_size", kHSL, kArgs1, true, false, kMain, &set_size<&ProxyConfig::buffer_size>},
    {"proxy_buffers", kHSL, kArgs2, true, false, kMain, &set_buffers},
    {"proxy_busy_buffers_size", kHSL, kArgs1, true, false, kMain, &set_size<&ProxyConfig::busy_buffers_size>},
    {"proxy_next_upstream", kHSL, kArgs1More, true, false, kMain, &set_next_upstream},
    {"proxy_next_upstream_tries", kHSL, kArgs1, true, false, kMain, &set_next_tries},
    {"proxy_next_upstream_timeout", kHSL, kArgs1, true, false, kMain,
     &set_timeout<&ProxyConfig::next_upstream_timeout>},
    {"proxy_max_temp_file_size", kHSL, kArgs1, true, false, kMain, &accept_size_or_zero},
    {"proxy_temp_file_write_size", kHSL, kArgs1, true, false, kMain, &accept_size_or_zero},
};

}  // namespace

Result<std::shared_ptr<const UpstreamGroupConfig>> upstream_for_address(Compiler& c, std::string_view host,
                                                                         const Node& n, uint16_t default_port) {
  std::shared_ptr<const UpstreamGroupConfig> group;
  bool has_port = !starts_with(host, "unix:") && host.find(':') != std::string_view::npos &&
                  host.back() != ']';
  if (!has_port) {
    for (const auto& u : c.cfg().upstreams)
      if (!u->implicit && u->name == host) group = u;
  } else {
    // "http://backend:9000" where `upstream backend {}` exists: nginx's
    // words (MinIO's docs have this slip), not a failed name lookup.
    const std::string_view name = host.substr(0, host.rfind(':'));
    for (const auto& u : c.cfg().upstreams)
      if (!u->implicit && u->name == name)
        return node_error(n, "upstream " + q(name) + " may not have port " + std::string(host.substr(name.size() + 1)));
  }
  // An address without a port: the scheme's (https: 443), named in full so
  // that http://h and https://h are two implicit groups.
  std::string with_port;
  if (!group && !has_port && default_port != 80 && !starts_with(host, "unix:")) {
    with_port = std::string(host) + ":" + std::to_string(default_port);
    host = with_port;
  }
  if (!group) {
    for (const auto& u : c.cfg().upstreams)
      if (u->implicit && u->name == host) group = u;
  }
  if (!group) {
    auto g = std::make_shared<UpstreamGroupConfig>();
    g->name = std::string(host);
    g->implicit = true;
    g->file = n.file ? *n.file : std::string();
    g->line = n.line;
    auto addrs = resolve(host, n);
    if (!addrs) return Error{addrs.error()};
    for (const auto& r : *addrs) {
      UpstreamServer sv;
      sv.name = server_name(r, host);
      sv.addr = r.addr;
      sv.addr_len = r.len;
      g->servers.push_back(std::move(sv));
    }
    c.cfg().upstreams.push_back(g);
    group = std::move(g);
  }
  return group;
}

std::span<const DirectiveSpec> proxy_directives() { return kProxyDirectives; }

void reset_uninherited_proxy(LocationSettings& s) {
  // proxy_pass belongs to its location: a nested location does not proxy
  // unless it says so (its proxy_* settings are still inherited).
  if (!s.proxy || !s.proxy->proxies()) return;
  auto p = std::make_shared<ProxyConfig>(*s.proxy);
  p->upstream.reset();
  p->url_template = Template{};
  p->ssl = false;
  s.proxy = std::move(p);
}

}  // namespace torii::config
