// The variables of nginx's geoip modules ($geoip_country_code...): which
// database each reads and what it takes from the answer. Plain names, no
// libGeoIP, so config/ and stream/ can compile templates with them.
#pragma once

#include <cstdint>
#include <string_view>

namespace torii::geoip {

enum class Field : uint8_t {
  // geoip_country
  country_code,
  country_code3,
  country_name,
  // geoip_org
  org,
  // geoip_city
  city_continent_code,
  city_country_code,
  city_country_code3,
  city_country_name,
  region,
  region_name,
  city,
  postal_code,
  latitude,
  longitude,
  dma_code,
  area_code,
};

// "geoip_country_code" (without '$') -> Field; false for any other name.
bool find_field(std::string_view name, Field& out);

}  // namespace torii::geoip
