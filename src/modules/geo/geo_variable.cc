#include "modules/geo/geo_variable.h"

#include <charconv>
#include <cstring>

#include "config/geo_config.h"
#include "http/exchange.h"
#include "http/variables.h"
#include "modules/realip/realip.h"

namespace torii::geo {

namespace {

// The address the block looks up: the source variable's value, or the
// client (after realip), then X-Forwarded-For when the block trusts the
// address at hand as a proxy. family 0: none (nginx then looks up
// 255.255.255.255, which finds the default unless a network covers it).
net::IpAddress address_for(const config::GeoConfig& g, const http::Exchange& ex) {
  net::IpAddress ip;
  if (g.has_source) {
    std::string text;
    http::render(g.source, ex, text);
    if (!net::parse_ip(text, ip)) return {};
  } else {
    ip = net::ip_of(ex.conn().peer);
  }
  return realip::x_forwarded_client(ex, ip, g.proxies, g.proxy_recursive);
}

}  // namespace

const std::string& geo_lookup(const config::GeoConfig& g, net::IpAddress ip) {
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (ip.family == AF_INET6 && memcmp(ip.bytes, kMapped, sizeof kMapped) == 0) {
    memmove(ip.bytes, ip.bytes + 12, 4);  // ::ffff:a.b.c.d is looked up as a.b.c.d
    ip.family = AF_INET;
  }
  int32_t v = RangeTable::kNone;
  if (ip.family == AF_INET6 && !g.ranges) {
    Key k = 0;
    for (size_t b = 0; b < 16; ++b) k = k << 8 | ip.bytes[b];
    v = g.v6.find(k);
  } else {
    Key k = 0xffffffffu;  // no address (or IPv6 with `ranges`, which are IPv4 only): nginx's INADDR_NONE
    if (ip.family == AF_INET) k = Key(ip.bytes[0]) << 24 | Key(ip.bytes[1]) << 16 | Key(ip.bytes[2]) << 8 | ip.bytes[3];
    v = g.v4.find(k);
  }
  return v == RangeTable::kNone ? g.default_value : g.values[static_cast<size_t>(v)];
}

bool append_value(const http::Exchange& ex, std::string_view arg, std::string& out) {
  size_t i = 0;
  auto r = std::from_chars(arg.data(), arg.data() + arg.size(), i);
  if (r.ec != std::errc() || !ex.config || i >= ex.config->geos.size()) return false;
  const config::GeoConfig& g = *ex.config->geos[i];
  out.append(geo_lookup(g, address_for(g, ex)));
  return true;
}

}  // namespace torii::geo
