// The WebDAV extension's directives (the nginx-dav-ext-module, Debian's
// libnginx-mod-http-dav-ext): dav_ext_methods and dav_ext_lock, which
// inherit into nested blocks, and dav_ext_lock_zone (http). The zone's
// lock table comes from the process-wide registry, so a reload keeps the
// locks; the handler is modules/dav_ext.
#include <string>

#include "config/directives.h"
#include "config/shared_zone.h"
#include "config/shared_args.h"
#include "core/ascii.h"
#include "core/quote.h"
#include "modules/dav_ext/lock_table.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

// dav_ext_methods off | PROPFIND OPTIONS LOCK UNLOCK: the first line in a
// block replaces what the block inherited; more lines add to it (nginx's
// bitmask slot, as dav_methods).
Status set_dav_ext_methods(Compiler&, Scope& s, const Node& n) {
  DavExtSettings& d = s.settings->dav_ext;
  if (!s.dav_ext_methods_here) d.methods = 0;
  s.dav_ext_methods_here = true;
  static constexpr NamedBit kNames[] = {
      {"off", 0},
      {"propfind", DavExtSettings::propfind},
      {"options", DavExtSettings::options},
      {"lock", DavExtSettings::lock},
      {"unlock", DavExtSettings::unlock},
  };
  return add_named_bits(n, kNames, d.methods);
}

// The zone named `name` in this config, made (undefined) when new.
std::shared_ptr<DavExtLockZone> zone_named(Compiler& c, std::string_view name) {
  for (auto& z : c.cfg().dav_ext_zones)
    if (z->name == name) return z;
  auto z = std::make_shared<DavExtLockZone>();
  z->name = std::string(name);
  c.cfg().dav_ext_zones.push_back(z);
  return z;
}

// dav_ext_lock_zone zone=NAME:SIZE [timeout=TIME]
Status set_dav_ext_lock_zone(Compiler& c, Scope&, const Node& n) {
  std::string_view name;
  size_t size = 0;
  bool has_zone = false;
  int64_t timeout_s = 60;
  for (const std::string& arg : n.args) {
    const std::string_view a = arg;
    if (a.starts_with("zone=")) {
      if (auto st = parse_shared_zone(n, a, name, size); !st) return st;
      has_zone = true;
    } else if (a.starts_with("timeout=")) {
      // Whole seconds, as nginx's ngx_parse_time(.., 1): no "ms", not 0.
      const std::string_view v = a.substr(8);
      int64_t ms = 0;
      if (v.find("ms") != std::string_view::npos || !parse_time_ms(v, ms) || ms < 1000)
        return node_error(n, "invalid timeout value " + q(a));
      timeout_s = ms / 1000;
    } else {
      return node_error(n, "invalid parameter " + q(a));
    }
  }
  if (!has_zone) return node_error(n, q(n.name) + " must have \"zone\" parameter");
  std::shared_ptr<DavExtLockZone> zone = zone_named(c, name);
  if (zone->defined) return node_error(n, "duplicate zone " + q(name));
  zone->defined = true;
  zone->size = size;
  zone->timeout_s = timeout_s;
  zone->table = dav_ext::LockTable::acquire(zone->name, size);
  return Ok{};
}

// dav_ext_lock zone=NAME: the zone may be defined later in the http block.
Status set_dav_ext_lock(Compiler& c, Scope& s, const Node& n) {
  if (s.dav_ext_lock_here) return node_error(n, q(n.name) + " directive is duplicate");
  const std::string_view a = n.args[0];
  if (!a.starts_with("zone=")) return node_error(n, "invalid parameter " + q(a));
  std::shared_ptr<DavExtLockZone> zone = zone_named(c, a.substr(5));
  s.dav_ext_lock_here = true;
  s.settings->dav_ext.lock_zone = zone;
  if (zone->defined) return Ok{};
  auto check = [zone, where = n.where()]() -> Status {
    if (zone->defined) return Ok{};
    return make_error(where + "zero size shared memory zone " + q(zone->name));
  };
  if (s.ctx == kHttp) {
    s.after_plain.push_back(check);
    return Ok{};
  }
  return check();
}

constexpr DirectiveSpec kDavExtDirectives[] = {
    {"dav_ext_methods", kHSL, kArgs1More, false, false, kMain, &set_dav_ext_methods},
    {"dav_ext_lock_zone", kHttp, kArgs1 | kArgs2, false, false, kMain, &set_dav_ext_lock_zone},
    {"dav_ext_lock", kHSL, kArgs1, false, false, kMain, &set_dav_ext_lock},
};

}  // namespace

std::span<const DirectiveSpec> dav_ext_directives() { return kDavExtDirectives; }

}  // namespace torii::config
