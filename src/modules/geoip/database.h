// One libGeoIP database (legacy .dat format) of nginx's geoip modules,
// opened once at load with GEOIP_MEMORY_CACHE and shared by every worker
// thread through the config. The lookup (IPv4 or IPv6) follows the
// database's type, as nginx's does.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/result.h"
#include "modules/geoip/fields.h"
#include "net/ip_address.h"

typedef struct GeoIPTag GeoIP;

namespace torii::geoip {

// Which directive opened it: each accepts its own database types.
enum class Kind : uint8_t { country, org, city };

class Database {
 public:
  // geoip_country|geoip_org|geoip_city FILE [utf8]: the file as written
  // (nginx resolves no prefix here). Errors are nginx's wording, without
  // the directive: `GeoIP_open("FILE") failed`, `invalid parameter "X"`,
  // `invalid GeoIP database "FILE" type:N`.
  static Result<std::shared_ptr<Database>> open(Kind kind, const std::string& path, std::string_view charset);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Appends `field` for the address; false when the database has no answer
  // (nginx's "not found"). An IPv4 database looks up an IPv6 client as
  // 255.255.255.255, an IPv6 one an IPv4 client as ::ffff:a.b.c.d.
  bool append(Field field, const net::IpAddress& ip, std::string& out) const;

  Kind kind() const { return kind_; }
  bool v6() const { return v6_; }

 private:
  Database(Kind kind, GeoIP* gi) : kind_(kind), gi_(gi) {}
  bool append_country(Field field, const net::IpAddress& ip, std::string& out) const;
  bool append_org(const net::IpAddress& ip, std::string& out) const;
  bool append_city(Field field, const net::IpAddress& ip, std::string& out) const;

  Kind kind_;
  GeoIP* gi_;
  bool v6_ = false;
  // libGeoIP's lookups read the cached file but also store the last
  // netmask in the shared handle: one lookup at a time per database (a
  // walk of at most 128 nodes in memory).
  mutable std::mutex mu_;
};

// nginx's "%.4f" (core/fixed_point.h).
void append_fixed4(double v, std::string& out);

}  // namespace torii::geoip
