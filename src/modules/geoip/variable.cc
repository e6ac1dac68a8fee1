#include "modules/geoip/variable.h"

#include "config/geoip_config.h"
#include "http/exchange.h"
#include "modules/realip/realip.h"

namespace torii::geoip {

namespace {

// nginx's ngx_http_geoip_addr: the connection's address (realip has
// replaced it already), or the one a trusted proxy names.
net::IpAddress client_address(const config::GeoIpConfig& g, const http::Exchange& ex) {
  return realip::x_forwarded_client(ex, net::ip_of(ex.conn().peer), g.proxies, g.proxy_recursive);
}

}  // namespace

bool append_value(const http::Exchange& ex, uint32_t field, std::string& out) {
  if (!ex.config || !ex.config->geoip) return false;
  const config::GeoIpConfig& g = *ex.config->geoip;
  const auto f = static_cast<Field>(field);
  const Database* db = g.database_for(f);
  if (!db) return false;
  return db->append(f, client_address(g, ex), out);
}

}  // namespace torii::geoip
