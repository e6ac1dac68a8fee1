#include "modules/realip/realip.h"

#include <sys/socket.h>

#include <memory>

#include "core/ascii.h"
#include "http/exchange.h"
#include "net/proxy_protocol.h"

namespace torii::realip {

bool trusted_peer(const net::IpAddress& ip, const std::vector<net::Cidr>& trusted) {
  for (const auto& c : trusted) {
    // A client of a `listen unix:` socket has no IP address (family 0):
    // "unix:" is what trusts it.
    if (ip.family == 0 ? c.family == AF_UNIX : net::cidr_match(c, ip)) return true;
  }
  return false;
}

namespace {

enum class Walk : uint8_t { declined, done, ok };

// One header value: nginx's ngx_http_get_forwarded_addr_internal.
Walk walk_value(net::IpAddress& addr, std::string_view v, const std::vector<net::Cidr>& trusted, bool recursive) {
  bool found = false;
  size_t len = v.size();
  do {
    if (!trusted_peer(addr, trusted)) return found ? Walk::done : Walk::declined;
    while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == ',')) --len;
    size_t start = len;
    while (start > 0 && v[start - 1] != ' ' && v[start - 1] != ',') --start;
    net::IpAddress next;
    if (!net::parse_ip_port(v.substr(start, len - start), next)) return found ? Walk::done : Walk::declined;
    addr = next;
    found = true;
    if (start == 0) break;
    len = start - 1;
  } while (recursive);
  return Walk::ok;
}

using core::iequals;

}  // namespace

std::optional<net::IpAddress> forwarded_address(const net::IpAddress& peer, const std::vector<std::string_view>& values,
                                                const std::vector<net::Cidr>& trusted, bool recursive) {
  net::IpAddress addr = peer;
  // Several header lines read as one list, the last line's last entry nearest.
  Walk rc = Walk::declined;
  bool found = false;
  for (auto it = values.rbegin(); it != values.rend(); ++it) {
    rc = walk_value(addr, *it, trusted, recursive);
    if (!recursive) break;
    if (rc == Walk::declined && found) {
      rc = Walk::done;
      break;
    }
    if (rc != Walk::ok) break;
    found = true;
  }
  if (rc == Walk::declined) return std::nullopt;
  return addr;
}

net::IpAddress x_forwarded_client(const http::Exchange& ex, const net::IpAddress& ip,
                                  const std::vector<net::Cidr>& trusted, bool recursive) {
  if (trusted.empty() || !ip.family) return ip;
  std::vector<std::string_view> values;
  for (const auto& h : ex.req.headers)
    if (iequals(h.name, "x-forwarded-for")) values.push_back(h.value);
  if (values.empty()) return ip;
  return forwarded_address(ip, values, trusted, recursive).value_or(ip);
}

void run(http::Exchange& ex, const config::RealIpConfig* cfg) {
  if (ex.realip_done || !cfg || cfg->from.empty()) return;
  using Source = config::RealIpConfig::Source;
  std::vector<std::string_view> values;
  const auto& conn = ex.conn();
  switch (cfg->source) {
    case Source::proxy_protocol:
      if (!conn.proxy_protocol) return;
      values.push_back(conn.proxy_protocol->src_addr);
      break;
    case Source::x_forwarded_for:
      for (const auto& h : ex.req.headers)
        if (iequals(h.name, "x-forwarded-for")) values.push_back(h.value);
      break;
    case Source::x_real_ip:
    case Source::header: {
      std::string_view name = cfg->source == Source::x_real_ip ? std::string_view("x-real-ip") : cfg->header;
      for (const auto& h : ex.req.headers) {
        if (iequals(h.name, name)) {
          values.push_back(h.value);
          break;
        }
      }
      break;
    }
  }
  if (values.empty()) return;
  auto addr = forwarded_address(net::ip_of(conn.peer), values, cfg->from, cfg->recursive);
  if (!addr) return;
  if (cfg->source == Source::proxy_protocol) addr->port = conn.proxy_protocol->src_port;
  auto client = std::make_unique<http::ConnectionInfo>(conn);
  client->peer = net::to_sockaddr(*addr);
  client->remote_addr = net::ip_text(*addr);
  client->remote_port = addr->port;
  ex.set_real_client(std::move(client));
  ex.realip_done = true;
}

}  // namespace torii::realip
