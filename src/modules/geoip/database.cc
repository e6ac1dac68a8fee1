#include "modules/geoip/database.h"

#include "core/fixed_point.h"
#include "core/quote.h"

#include <GeoIP.h>
#include <GeoIPCity.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

namespace torii::geoip {

namespace {

// The types each directive takes, and whether they are IPv6 databases.
bool accepts(Kind kind, int type, bool& v6) {
  v6 = false;
  switch (kind) {
    case Kind::country:
      if (type == GEOIP_COUNTRY_EDITION) return true;
      v6 = type == GEOIP_COUNTRY_EDITION_V6;
      return v6;
    case Kind::org:
      if (type == GEOIP_ISP_EDITION || type == GEOIP_ORG_EDITION || type == GEOIP_DOMAIN_EDITION ||
          type == GEOIP_ASNUM_EDITION)
        return true;
      v6 = type == GEOIP_ISP_EDITION_V6 || type == GEOIP_ORG_EDITION_V6 || type == GEOIP_DOMAIN_EDITION_V6 ||
           type == GEOIP_ASNUM_EDITION_V6;
      return v6;
    case Kind::city:
      if (type == GEOIP_CITY_EDITION_REV0 || type == GEOIP_CITY_EDITION_REV1) return true;
      v6 = type == GEOIP_CITY_EDITION_REV0_V6 || type == GEOIP_CITY_EDITION_REV1_V6;
      return v6;
  }
  return false;
}

// The 32-bit number an IPv4 database is searched with (::ffff:a.b.c.d as
// a.b.c.d); nginx's INADDR_NONE for anything else.
unsigned long ipnum_v4(const net::IpAddress& ip) {
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  const uint8_t* b = ip.bytes;
  if (ip.family == AF_INET6 && memcmp(b, kMapped, sizeof kMapped) == 0) {
    b += 12;
  } else if (ip.family != AF_INET) {
    return 0xffffffffUL;
  }
  return static_cast<unsigned long>(b[0]) << 24 | static_cast<unsigned long>(b[1]) << 16 |
         static_cast<unsigned long>(b[2]) << 8 | b[3];
}

geoipv6_t ipnum_v6(const net::IpAddress& ip) {
  geoipv6_t a{};
  if (ip.family == AF_INET6) {
    memcpy(a.s6_addr, ip.bytes, 16);
  } else if (ip.family == AF_INET) {
    a.s6_addr[10] = 0xff;
    a.s6_addr[11] = 0xff;
    memcpy(a.s6_addr + 12, ip.bytes, 4);
  }
  return a;
}

bool append_c(const char* s, std::string& out) {
  if (!s) return false;
  out.append(s);
  return true;
}

}  // namespace

void append_fixed4(double v, std::string& out) { append_fixed(v, 4, out); }

Result<std::shared_ptr<Database>> Database::open(Kind kind, const std::string& path, std::string_view charset) {
  GeoIP* gi = GeoIP_open(path.c_str(), GEOIP_MEMORY_CACHE | GEOIP_SILENCE);
  if (!gi) return make_error("GeoIP_open(" + q(path) + ") failed");
  std::shared_ptr<Database> db(new Database(kind, gi));
  if (!charset.empty()) {
    if (charset != "utf8") return make_error("invalid parameter " + q(charset));
    GeoIP_set_charset(gi, GEOIP_CHARSET_UTF8);
  }
  const int type = static_cast<unsigned char>(gi->databaseType);
  if (!accepts(kind, type, db->v6_)) {
    return make_error(std::string(kind == Kind::city ? "invalid GeoIP City database " : "invalid GeoIP database ") +
                      q(path) + " type:" + std::to_string(type));
  }
  return db;
}

Database::~Database() { GeoIP_delete(gi_); }

bool Database::append(Field field, const net::IpAddress& ip, std::string& out) const {
  switch (field) {
    case Field::country_code:
    case Field::country_code3:
    case Field::country_name:
      return kind_ == Kind::country && append_country(field, ip, out);
    case Field::org:
      return kind_ == Kind::org && append_org(ip, out);
    default:
      return kind_ == Kind::city && append_city(field, ip, out);
  }
}

bool Database::append_country(Field field, const net::IpAddress& ip, std::string& out) const {
  GeoIPLookup gl{};
  std::lock_guard lock(mu_);
  if (v6_) {
    geoipv6_t a = ipnum_v6(ip);
    if (field == Field::country_code) return append_c(GeoIP_country_code_by_ipnum_v6_gl(gi_, a, &gl), out);
    if (field == Field::country_code3) return append_c(GeoIP_country_code3_by_ipnum_v6_gl(gi_, a, &gl), out);
    return append_c(GeoIP_country_name_by_ipnum_v6_gl(gi_, a, &gl), out);
  }
  unsigned long n = ipnum_v4(ip);
  if (field == Field::country_code) return append_c(GeoIP_country_code_by_ipnum_gl(gi_, n, &gl), out);
  if (field == Field::country_code3) return append_c(GeoIP_country_code3_by_ipnum_gl(gi_, n, &gl), out);
  return append_c(GeoIP_country_name_by_ipnum_gl(gi_, n, &gl), out);
}

bool Database::append_org(const net::IpAddress& ip, std::string& out) const {
  GeoIPLookup gl{};
  char* name = nullptr;
  {
    std::lock_guard lock(mu_);
    name = v6_ ? GeoIP_name_by_ipnum_v6_gl(gi_, ipnum_v6(ip), &gl) : GeoIP_name_by_ipnum_gl(gi_, ipnum_v4(ip), &gl);
  }
  if (!name) return false;
  out.append(name);
  free(name);
  return true;
}

bool Database::append_city(Field field, const net::IpAddress& ip, std::string& out) const {
  GeoIPRecord* r = nullptr;
  {
    std::lock_guard lock(mu_);
    r = v6_ ? GeoIP_record_by_ipnum_v6(gi_, ipnum_v6(ip)) : GeoIP_record_by_ipnum(gi_, ipnum_v4(ip));
  }
  if (!r) return false;
  bool found = true;
  switch (field) {
    case Field::city_continent_code: found = append_c(r->continent_code, out); break;
    case Field::city_country_code: found = append_c(r->country_code, out); break;
    case Field::city_country_code3: found = append_c(r->country_code3, out); break;
    case Field::city_country_name: found = append_c(r->country_name, out); break;
    case Field::region: found = append_c(r->region, out); break;
    case Field::region_name:  // libGeoIP reads the country code unchecked
      found = r->country_code && append_c(GeoIP_region_name_by_code(r->country_code, r->region), out);
      break;
    case Field::city: found = append_c(r->city, out); break;
    case Field::postal_code: found = append_c(r->postal_code, out); break;
    case Field::latitude: append_fixed4(r->latitude, out); break;
    case Field::longitude: append_fixed4(r->longitude, out); break;
    case Field::dma_code: out.append(std::to_string(r->dma_code)); break;
    case Field::area_code: out.append(std::to_string(r->area_code)); break;
    default: found = false; break;
  }
  GeoIPRecord_delete(r);
  return found;
}

}  // namespace torii::geoip
