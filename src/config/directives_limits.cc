// The rate and connection limit directives: limit_req_zone, limit_req,
// limit_req_status, limit_req_log_level, limit_req_dry_run, their
// limit_conn twins, limit_rate and limit_rate_after. Zones are made on the
// first mention of their name (Config::limit_zones); their tables come from
// the process-wide registry, so a reload keeps a zone's state.
#include <algorithm>
#include <string>

#include "config/directives.h"
#include "core/quote.h"
#include "config/shared_zone.h"
#include "modules/limit_conn/conn_table.h"
#include "modules/limit_req/req_table.h"

namespace torii::config {

namespace {

constexpr uint32_t kReqHere = 1;
constexpr uint32_t kConnHere = 2;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

LimitZone::Kind kind_of(const Node& n) {
  return starts_with(n.name, "limit_req") ? LimitZone::Kind::req : LimitZone::Kind::conn;
}

// The zone named `name` in this config, made (undefined) when new.
Result<std::shared_ptr<LimitZone>> zone_named(Compiler& c, const Node& n, std::string_view name) {
  for (auto& z : c.cfg().limit_zones) {
    if (z->name != name) continue;
    if (z->kind != kind_of(n))
      return node_error(n, "the shared memory zone " + q(name) + " is already declared for a different use");
    return z;
  }
  auto z = std::make_shared<LimitZone>();
  z->name = std::string(name);
  z->kind = kind_of(n);
  c.cfg().limit_zones.push_back(z);
  return z;
}

// "zone=name:size" of the *_zone directives.
Status parse_zone_arg(Compiler& c, const Node& n, std::string_view arg, std::shared_ptr<LimitZone>& out) {
  std::string_view name;
  size_t size = 0;
  if (auto st = parse_shared_zone(n, arg, name, size); !st) return st;
  auto z = zone_named(c, n, name);
  if (!z) return Error{z.error()};
  if ((*z)->defined)
    return node_error(n, n.name + " " + q((*z)->name) + " is already bound to key " + q((*z)->key.source));
  (*z)->size = size;
  out = *z;
  return Ok{};
}

Status set_limit_req_zone(Compiler& c, Scope&, const Node& n) {
  auto key = compile_template(n.args[0]);
  if (!key) return node_error(n, key.error());
  std::shared_ptr<LimitZone> zone;
  uint64_t rate = 1, scale = 1;
  for (size_t i = 1; i < n.args.size(); ++i) {
    std::string_view a = n.args[i];
    if (starts_with(a, "zone=")) {
      auto st = parse_zone_arg(c, n, a, zone);
      if (!st) return st;
    } else if (starts_with(a, "rate=")) {
      std::string_view v = a.substr(5);
      if (v.ends_with("r/s")) {
        v.remove_suffix(3);
      } else if (v.ends_with("r/m")) {
        v.remove_suffix(3);
        scale = 60;
      }
      if (!parse_number(v, rate) || rate == 0 || rate > (uint64_t(1) << 40)) return node_error(n, "invalid rate " + q(a));
    } else {
      return node_error(n, "invalid parameter " + q(a));
    }
  }
  if (!zone) return node_error(n, q(n.name) + " must have \"zone\" parameter");
  zone->defined = true;
  zone->key = std::move(*key);
  zone->rate = rate * 1000 / scale;
  zone->req_table = limits::ReqTable::acquire(zone->name, zone->size);
  return Ok{};
}

Status set_limit_conn_zone(Compiler& c, Scope&, const Node& n) {
  auto key = compile_template(n.args[0]);
  if (!key) return node_error(n, key.error());
  std::string_view a = n.args[1];
  if (!starts_with(a, "zone=")) return node_error(n, "invalid parameter " + q(a));
  std::shared_ptr<LimitZone> zone;
  auto st = parse_zone_arg(c, n, a, zone);
  if (!st) return st;
  zone->defined = true;
  zone->key = std::move(*key);
  zone->conn_table = limits::ConnTable::acquire(zone->name, zone->size);
  return Ok{};
}

// A zone a limit_req/limit_conn names must be defined by the end of the
// http block's own directives; inside a server or location it already is.
Status require_defined(Compiler&, Scope& s, const Node& n, const std::shared_ptr<LimitZone>& zone) {
  if (zone->defined) return Ok{};
  if (s.ctx == kHttp) {
    s.after_plain.push_back([zone, where = n.where()]() -> Status {
      if (zone->defined) return Ok{};
      return make_error(where + "zero size shared memory zone " + q(zone->name));
    });
    return Ok{};
  }
  return node_error(n, "zero size shared memory zone " + q(zone->name));
}

Status set_limit_req(Compiler& c, Scope& s, const Node& n) {
  LimitReqRule rule;
  std::shared_ptr<LimitZone> zone;
  for (const auto& arg : n.args) {
    std::string_view a = arg;
    uint64_t v = 0;
    if (starts_with(a, "zone=")) {
      auto z = zone_named(c, n, a.substr(5));
      if (!z) return Error{z.error()};
      zone = *z;
    } else if (starts_with(a, "burst=")) {
      if (!parse_number(a.substr(6), v) || v == 0 || v > (uint64_t(1) << 40)) return node_error(n, "invalid burst value " + q(a));
      rule.burst = v * 1000;
    } else if (starts_with(a, "delay=")) {
      if (!parse_number(a.substr(6), v) || v == 0 || v > (uint64_t(1) << 40)) return node_error(n, "invalid delay value " + q(a));
      rule.delay = v * 1000;
    } else if (a == "nodelay") {
      rule.delay = uint64_t(1) << 62;  // nginx: the largest value, every request of the burst passes at once
    } else {
      return node_error(n, "invalid parameter " + q(a));
    }
  }
  if (!zone) return node_error(n, q(n.name) + " must have \"zone\" parameter");
  if (!(s.limits_here & kReqHere)) {
    s.settings->limits.req.clear();
    s.limits_here |= kReqHere;
  }
  for (const auto& r : s.settings->limits.req)
    if (r.zone == zone) return node_error(n, q(n.name) + " directive is duplicate");
  auto st = require_defined(c, s, n, zone);
  if (!st) return st;
  rule.zone = zone;
  s.settings->limits.req.push_back(std::move(rule));
  return Ok{};
}

Status set_limit_conn(Compiler& c, Scope& s, const Node& n) {
  auto z = zone_named(c, n, n.args[0]);
  if (!z) return Error{z.error()};
  uint64_t v = 0;
  if (!parse_number(n.args[1], v) || v == 0 || v > 65535)
    return node_error(n, "invalid number of connections " + q(n.args[1]));
  if (!(s.limits_here & kConnHere)) {
    s.settings->limits.conn.clear();
    s.limits_here |= kConnHere;
  }
  for (const auto& r : s.settings->limits.conn)
    if (r.zone == *z) return node_error(n, q(n.name) + " directive is duplicate");
  auto st = require_defined(c, s, n, *z);
  if (!st) return st;
  s.settings->limits.conn.push_back({*z, static_cast<uint32_t>(v)});
  return Ok{};
}

Status parse_status(const Node& n, int& out) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v < 400 || v > 599) return node_error(n, "value must be between 400 and 599");
  out = static_cast<int>(v);
  return Ok{};
}

Status set_req_status(Compiler&, Scope& s, const Node& n) { return parse_status(n, s.settings->limits.req_status); }
Status set_conn_status(Compiler&, Scope& s, const Node& n) { return parse_status(n, s.settings->limits.conn_status); }

Status parse_limit_level(const Node& n, LogLevel& out) {
  static constexpr std::pair<std::string_view, LogLevel> kLevels[] = {
      {"info", LogLevel::info}, {"notice", LogLevel::notice}, {"warn", LogLevel::warn}, {"error", LogLevel::error}};
  for (const auto& [name, level] : kLevels) {
    if (n.args[0] == name) {
      out = level;
      return Ok{};
    }
  }
  return node_error(n, "invalid value " + q(n.args[0]) + " in " + q(n.name) + " directive, it must be \"info\", "
                       "\"notice\", \"warn\" or \"error\"");
}

Status set_req_level(Compiler&, Scope& s, const Node& n) { return parse_limit_level(n, s.settings->limits.req_log_level); }
Status set_conn_level(Compiler&, Scope& s, const Node& n) { return parse_limit_level(n, s.settings->limits.conn_log_level); }

Status set_req_dry_run(Compiler&, Scope& s, const Node& n) {
  s.settings->limits.req_dry_run = n.args[0] == "on";
  return Ok{};
}
Status set_conn_dry_run(Compiler&, Scope& s, const Node& n) {
  s.settings->limits.conn_dry_run = n.args[0] == "on";
  return Ok{};
}

Status set_limit_rate(Compiler&, Scope& s, const Node& n) {
  const bool rate = n.name == "limit_rate";
  Template& tpl = rate ? s.settings->limits.rate_template : s.settings->limits.rate_after_template;
  int64_t& value = rate ? s.settings->limits.rate : s.settings->limits.rate_after;
  tpl = Template{};
  value = 0;
  if (n.args[0].find('$') != std::string::npos) {  // the core docs' `limit_rate $rate;`
    auto t = compile_template(n.args[0]);
    if (!t) return node_error(n, t.error());
    tpl = std::move(*t);
    return Ok{};
  }
  if (!parse_size(n.args[0], value)) return node_error(n, "invalid value " + q(n.args[0]) + " in " + q(n.name) + " directive");
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;
constexpr Context kNone = kMain;

const DirectiveSpec kLimitsDirectives[] = {
    {"limit_req_zone", kHttp, kArgs3, false, false, kNone, &set_limit_req_zone},
    {"limit_req", kHSL, kArgs1 | kArgs2 | kArgs3, false, false, kNone, &set_limit_req},
    {"limit_req_status", kHSL, kArgs1, true, false, kNone, &set_req_status},
    {"limit_req_log_level", kHSL, kArgs1, true, false, kNone, &set_req_level},
    {"limit_req_dry_run", kHSL, kFlag, true, false, kNone, &set_req_dry_run},
    {"limit_conn_zone", kHttp, kArgs2, false, false, kNone, &set_limit_conn_zone},
    {"limit_conn", kHSL, kArgs2, false, false, kNone, &set_limit_conn},
    {"limit_conn_status", kHSL, kArgs1, true, false, kNone, &set_conn_status},
    {"limit_conn_log_level", kHSL, kArgs1, true, false, kNone, &set_conn_level},
    {"limit_conn_dry_run", kHSL, kFlag, true, false, kNone, &set_conn_dry_run},
    {"limit_rate", kHSL | kLocationIf, kArgs1, true, false, kNone, &set_limit_rate},
    {"limit_rate_after", kHSL | kLocationIf, kArgs1, true, false, kNone, &set_limit_rate},
};

}  // namespace

std::span<const DirectiveSpec> limits_directives() { return kLimitsDirectives; }

}  // namespace torii::config
