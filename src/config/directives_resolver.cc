// `resolver` and `resolver_timeout` (ngx_http_core_module): the name
// servers a worker asks at request time (dns/resolver.h), for proxy_pass
// with variables and anything else that resolves names per request.
#include <arpa/inet.h>
#include <netdb.h>

#include <cstring>

#include "config/directives.h"
#include "core/quote.h"
#include "dns/resolver_config.h"

namespace torii::config {

namespace {

// The c-ares CSV form of one address: "1.2.3.4:53", "[::1]:53".
std::string csv_entry(const sockaddr* sa) {
  char text[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET6) {
    const auto* s6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &s6->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(s6->sin6_port));
  }
  const auto* s4 = reinterpret_cast<const sockaddr_in*>(sa);
  inet_ntop(AF_INET, &s4->sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(s4->sin_port));
}

// "1.2.3.4", "1.2.3.4:5353", "[::1]", "[::1]:53", "ns.example:53": a name
// is resolved now, at load, as nginx does; each of its addresses is a server.
Status add_servers(const Node& n, std::string_view text, dns::ResolverConfig& r) {
  std::string host;
  std::string port = "53";
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return node_error(n, "invalid address " + q(text));
    host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return node_error(n, "invalid address " + q(text));
      port = std::string(rest.substr(1));
    }
  } else {
    size_t colon = text.find(':');
    host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) port = std::string(text.substr(colon + 1));
  }
  uint64_t p = 0;
  if (!parse_number(port, p) || p == 0 || p > 65535) return node_error(n, "invalid port in resolver " + q(text));
  if (host.empty()) return node_error(n, "no host in resolver " + q(text));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || !res)
    return node_error(n, "host not found in resolver " + q(text));
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    std::string e = csv_entry(ai->ai_addr);
    bool dup = false;
    for (const auto& s : r.servers) dup = dup || s == e;
    if (!dup) r.servers.push_back(std::move(e));
  }
  freeaddrinfo(res);
  return Ok{};
}

Status on_off(const Node& n, std::string_view arg, std::string_view value, bool& out) {
  if (value == "on") out = true;
  else if (value == "off") out = false;
  else return node_error(n, "invalid parameter: " + std::string(arg));
  return Ok{};
}

Status set_resolver(Compiler&, Scope& s, const Node& n) {
  auto r = parse_resolver(n);
  if (!r) return Error{r.error()};
  s.settings->resolver = std::move(*r);
  return Ok{};
}

Status set_resolver_timeout(Compiler&, Scope& s, const Node& n) {
  auto t = parse_resolver_timeout(n);
  if (!t) return Error{t.error()};
  s.settings->resolver_timeout = *t;
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

constexpr DirectiveSpec kResolverDirectives[] = {
    {"resolver", kHSL, kArgs1More, true, false, kMain, &set_resolver},
    {"resolver_timeout", kHSL, kArgs1, true, false, kMain, &set_resolver_timeout},
};

}  // namespace

Result<std::shared_ptr<const dns::ResolverConfig>> parse_resolver(const Node& n) {
  auto r = std::make_shared<dns::ResolverConfig>();
  for (const auto& a : n.args) {
    std::string_view arg = a;
    if (arg.starts_with("valid=")) {
      int64_t ms = 0;
      if (!parse_time_ms(arg.substr(6), ms) || ms <= 0) return node_error(n, "invalid parameter: " + std::string(arg));
      r->valid = Ms(ms);
    } else if (arg.starts_with("ipv4=")) {
      if (Status st = on_off(n, arg, arg.substr(5), r->ipv4); !st) return Error{st.error()};
    } else if (arg.starts_with("ipv6=")) {
      if (Status st = on_off(n, arg, arg.substr(5), r->ipv6); !st) return Error{st.error()};
    } else if (arg.starts_with("status_zone=")) {
      // A shared-memory statistics zone of nginx: there is nothing to share here.
    } else if (arg.find('=') != std::string_view::npos) {
      return node_error(n, "invalid parameter: " + std::string(arg));
    } else if (Status st = add_servers(n, arg, *r); !st) {
      return Error{st.error()};
    }
  }
  if (!r->ipv4 && !r->ipv6) return node_error(n, "\"ipv4\" and \"ipv6\" cannot both be \"off\"");
  if (r->servers.empty()) return node_error(n, "no name servers defined");
  for (const auto& sv : r->servers) r->key += sv + ",";
  r->key += " valid=" + std::to_string(r->valid.count()) + (r->ipv4 ? " 4" : "") + (r->ipv6 ? " 6" : "");
  return std::shared_ptr<const dns::ResolverConfig>(std::move(r));
}

Result<Ms> parse_resolver_timeout(const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms) || ms <= 0)
    return node_error(n, "invalid value " + q(n.args[0]) + " in \"resolver_timeout\" directive");
  return Ms(ms);
}

std::span<const DirectiveSpec> resolver_directives() { return kResolverDirectives; }

}  // namespace torii::config
