// geoip_country, geoip_org, geoip_city, geoip_proxy, geoip_proxy_recursive
// (nginx's geoip module, http level): the databases the $geoip_* variables
// read, and the proxies trusted to name the client in X-Forwarded-For.
// The stream block has its own (without proxies).
#pragma once

#include <memory>
#include <vector>

#include "modules/geoip/database.h"
#include "net/ip_address.h"

namespace torii::config {

struct GeoIpConfig {
  std::shared_ptr<const geoip::Database> country;
  std::shared_ptr<const geoip::Database> org;
  std::shared_ptr<const geoip::Database> city;
  std::vector<net::Cidr> proxies;
  bool proxy_recursive = false;

  // The database a variable reads; null when its directive is absent.
  const geoip::Database* database_for(geoip::Field f) const {
    switch (f) {
      case geoip::Field::country_code:
      case geoip::Field::country_code3:
      case geoip::Field::country_name:
        return country.get();
      case geoip::Field::org:
        return org.get();
      default:
        return city.get();
    }
  }
};

}  // namespace torii::config
