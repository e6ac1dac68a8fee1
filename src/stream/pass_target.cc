#include "stream/pass_target.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "config/directives.h"
#include "core/ascii.h"
#include "dns/resolver.h"
#include "net/address.h"
#include "stream/stream_worker.h"
#include "stream/variables.h"

namespace torii::stream {

PassTarget find_pass_target(const StreamConfig& cfg, const std::string& target) {
  PassTarget t;
  for (const auto& u : cfg.upstreams) {
    if (!u->group->implicit && core::iequals(u->group->name, target)) {  // as nginx: without case
      t.upstream = u;
      return t;
    }
  }
  sockaddr_storage addr{};
  if (literal_address(target, addr)) {
    t.upstream = session_group(target, {addr});
    return t;
  }
  const size_t colon = target.rfind(':');
  uint64_t port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !config::parse_number(std::string_view(target).substr(colon + 1), port) || port == 0 || port > 65535) {
    t.error = "no port in upstream \"" + target + "\"";
    return t;
  }
  t.host = target.substr(0, colon);
  t.port = uint16_t(port);
  return t;
}

std::shared_ptr<dns::Lookup> choose_upstream(StreamWorker& w, const StreamConfig& cfg, const Server& server,
                                             const Facts& facts, UpstreamChosen chosen, UpstreamFailed failed) {
  if (server.pass) {
    chosen(server.pass);
    return nullptr;
  }
  std::string target;
  render(*server.pass_template, facts, target);
  PassTarget where = find_pass_target(cfg, target);
  if (where.upstream) {
    chosen(std::move(where.upstream));
    return nullptr;
  }
  if (!where.error.empty()) {
    failed(where.error);
    return nullptr;
  }
  const Settings& s = server.settings;
  if (!s.resolver) {
    failed("no resolver defined to resolve " + where.host);
    return nullptr;
  }
  dns::Resolver& resolver = w.resolver(*s.resolver);
  auto resolved = [chosen, failed, target, host = where.host, port = where.port](const dns::Answer& a) {
    if (a.state != 0) {
      failed(host + " could not be resolved (" + std::to_string(a.state) + ": " + dns::state_text(a.state) + ")");
      return;
    }
    chosen(session_group(target, answer_addresses(a, port)));
  };
  if (const dns::Answer* cached = resolver.cached(where.host)) {
    resolved(*cached);
    return nullptr;
  }
  return resolver.resolve(where.host, s.resolver_timeout.count(), std::move(resolved));
}

bool literal_address(std::string_view text, sockaddr_storage& addr) {
  std::string host;
  std::string_view port;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') return false;
    host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return false;
    host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  uint64_t p = 0;
  if (port.empty() || port.size() > 5) return false;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    p = p * 10 + uint64_t(c - '0');
  }
  if (p == 0 || p > 65535) return false;
  addr = {};
  auto* in4 = reinterpret_cast<sockaddr_in*>(&addr);
  if (inet_pton(AF_INET, host.c_str(), &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    in4->sin_port = htons(uint16_t(p));
    return true;
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(uint16_t(p));
    return true;
  }
  return false;
}

std::shared_ptr<const Upstream> session_group(const std::string& name, const std::vector<sockaddr_storage>& addrs) {
  auto g = std::make_shared<config::UpstreamGroupConfig>();
  g->name = name;
  g->implicit = true;
  for (const auto& addr : addrs) {
    config::UpstreamServer s;
    s.name = net::address_with_port(addr);
    s.addr = addr;
    s.addr_len = addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    s.id = unsigned(g->servers.size());
    g->servers.push_back(std::move(s));
  }
  auto u = std::make_shared<Upstream>();
  u->group = std::move(g);
  u->per_session = true;
  return u;
}

std::vector<sockaddr_storage> answer_addresses(const dns::Answer& a, uint16_t port) {
  std::vector<sockaddr_storage> addrs;
  for (const auto& r : a.addrs) {
    sockaddr_storage x{};
    std::memcpy(&x, &r.addr, r.len);
    if (x.ss_family == AF_INET) reinterpret_cast<sockaddr_in&>(x).sin_port = htons(port);
    if (x.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6&>(x).sin6_port = htons(port);
    addrs.push_back(x);
  }
  return addrs;
}

}  // namespace torii::stream
