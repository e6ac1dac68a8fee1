#include "modules/geoip/fields.h"

namespace torii::geoip {

namespace {

struct Named {
  std::string_view name;
  Field field;
};

constexpr Named kFields[] = {
    {"geoip_country_code", Field::country_code},
    {"geoip_country_code3", Field::country_code3},
    {"geoip_country_name", Field::country_name},
    {"geoip_org", Field::org},
    {"geoip_city_continent_code", Field::city_continent_code},
    {"geoip_city_country_code", Field::city_country_code},
    {"geoip_city_country_code3", Field::city_country_code3},
    {"geoip_city_country_name", Field::city_country_name},
    {"geoip_region", Field::region},
    {"geoip_region_name", Field::region_name},
    {"geoip_city", Field::city},
    {"geoip_postal_code", Field::postal_code},
    {"geoip_latitude", Field::latitude},
    {"geoip_longitude", Field::longitude},
    {"geoip_dma_code", Field::dma_code},
    {"geoip_area_code", Field::area_code},
};

}  // namespace

bool find_field(std::string_view name, Field& out) {
  if (name.substr(0, 6) != "geoip_") return false;
  for (const auto& f : kFields) {
    if (f.name == name) {
      out = f.field;
      return true;
    }
  }
  return false;
}

}  // namespace torii::geoip
