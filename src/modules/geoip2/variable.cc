#include "modules/geoip2/variable.h"

#include <charconv>

#include "config/geoip2_config.h"
#include "http/exchange.h"
#include "http/variables.h"
#include "modules/geoip2/database.h"
#include "modules/realip/realip.h"

namespace torii::geoip2 {

namespace {

// source=: its value when it is an address (nginx's ngx_parse_addr), else
// none, a miss. Otherwise the connection's address (realip has replaced it
// already), or the one a trusted proxy names.
net::IpAddress address_for(const config::Geoip2Config& g, const config::Geoip2Variable& v,
                           const http::Exchange& ex) {
  net::IpAddress ip;
  if (!v.source.empty()) {
    std::string text;
    http::render(v.source, ex, text);
    if (!net::parse_ip(text, ip)) return {};
    return ip;
  }
  ip = net::ip_of(ex.conn().peer);
  if (g.proxies.empty()) return ip;
  return realip::x_forwarded_client(ex, ip, g.proxies, g.proxy_recursive);
}

}  // namespace

bool append_value(const http::Exchange& ex, std::string_view arg, std::string& out) {
  if (!ex.config || !ex.config->geoip2) return false;
  const config::Geoip2Config& g = *ex.config->geoip2;
  size_t i = 0;
  auto r = std::from_chars(arg.data(), arg.data() + arg.size(), i);
  if (r.ec != std::errc() || i >= g.variables.size()) return false;
  const config::Geoip2Variable& v = *g.variables[i];
  if (v.lookup.is_metadata) return append_metadata(v.lookup, out);
  return append_record(v.lookup, address_for(g, v, ex), out);
}

void after_request(const http::Exchange& ex) {
  if (ex.config && ex.config->geoip2) check_for_changes(ex.config->geoip2->databases);
}

}  // namespace torii::geoip2
