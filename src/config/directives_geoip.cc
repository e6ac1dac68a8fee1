// The geoip module's directives (http level only, as nginx's): each
// database is opened here, once per load, and shared by the workers.
#include <memory>
#include <string>

#include "config/directives.h"
#include "core/quote.h"
#include "config/geoip_config.h"
#include "config/shared_args.h"

namespace torii::config {

namespace {

// The http block's settings, copied on write.
GeoIpConfig& geoip_of(Compiler& c) {
  auto copy = c.cfg().geoip ? std::make_shared<GeoIpConfig>(*c.cfg().geoip) : std::make_shared<GeoIpConfig>();
  GeoIpConfig* raw = copy.get();
  c.cfg().geoip = std::move(copy);
  return *raw;
}

Status set_database(Compiler& c, Scope&, const Node& n) {
  auto db = open_geoip_database(n);
  if (!db) return Error{db.error()};
  GeoIpConfig& g = geoip_of(c);
  switch ((*db)->kind()) {
    case geoip::Kind::country: g.country = *db; break;
    case geoip::Kind::org: g.org = *db; break;
    case geoip::Kind::city: g.city = *db; break;
  }
  return Ok{};
}

Status set_proxy(Compiler& c, Scope&, const Node& n) {
  auto cidr = trusted_network(c, n);
  if (!cidr) return Error{cidr.error()};
  geoip_of(c).proxies.push_back(*cidr);
  return Ok{};
}

Status set_proxy_recursive(Compiler& c, Scope&, const Node& n) {
  geoip_of(c).proxy_recursive = n.args[0] == "on";
  return Ok{};
}

constexpr DirectiveSpec kGeoIpDirectives[] = {
    {"geoip_country", kHttp, kArgs1 | kArgs2, true, false, kMain, &set_database},
    {"geoip_org", kHttp, kArgs1 | kArgs2, true, false, kMain, &set_database},
    {"geoip_city", kHttp, kArgs1 | kArgs2, true, false, kMain, &set_database},
    {"geoip_proxy", kHttp, kArgs1, false, false, kMain, &set_proxy},
    {"geoip_proxy_recursive", kHttp, kFlag, true, false, kMain, &set_proxy_recursive},
};

}  // namespace

Result<std::shared_ptr<const geoip::Database>> open_geoip_database(const Node& n) {
  geoip::Kind kind = geoip::Kind::country;
  if (n.name == "geoip_org") kind = geoip::Kind::org;
  if (n.name == "geoip_city") kind = geoip::Kind::city;
  auto db = geoip::Database::open(kind, n.args[0], n.args.size() > 1 ? std::string_view(n.args[1]) : std::string_view());
  if (!db) return node_error(n, db.error());
  return std::shared_ptr<const geoip::Database>(std::move(*db));
}

std::span<const DirectiveSpec> geoip_directives() { return kGeoIpDirectives; }

}  // namespace torii::config
