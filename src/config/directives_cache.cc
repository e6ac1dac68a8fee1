// The proxy cache's directives: proxy_cache_path (a zone: its directory
// and index, cache/zone.h), proxy_cache and the proxy_cache_* settings a
// location merges down like the other proxy_* ones. The setters are
// written once for any module whose settings hold a ProxyConfig
// (proxy_*, fastcgi_*, uwsgi_*): `M` says where its ProxyConfig is.
#include <algorithm>
#include <string>

#include "cache/zone.h"
#include "core/quote.h"
#include "config/cache_config.h"
#include "config/cgi_config.h"
#include "config/directives.h"
#include "config/directives_cgi.h"
#include "config/proxy_config.h"

namespace torii::config {

namespace {

// Where each module keeps its ProxyConfig, copied on write.
struct ProxyModule {
  static ProxyConfig& edit(Scope& s) {
    auto p = s.settings->proxy ? std::make_shared<ProxyConfig>(*s.settings->proxy) : std::make_shared<ProxyConfig>();
    ProxyConfig* raw = p.get();
    s.settings->proxy = std::move(p);
    return *raw;
  }
  static const ProxyConfig* peek(const LocationSettings& s) { return s.proxy.get(); }
  static uint32_t& here(Scope& s) { return s.proxy_here; }
  static constexpr uint32_t kShift = 16;  // below: proxy_set_header & co (directives_proxy.cc)
};

template <std::shared_ptr<const CgiConfig> LocationSettings::*Member, uint32_t Shift>
struct CgiModule {
  static ProxyConfig& edit(Scope& s) {
    auto& slot = s.settings->*Member;
    auto copy = slot ? std::make_shared<CgiConfig>(*slot) : std::make_shared<CgiConfig>();
    CgiConfig* raw = copy.get();
    slot = std::move(copy);
    return raw->upstream;
  }
  static const ProxyConfig* peek(const LocationSettings& s) {
    return s.*Member ? &(s.*Member)->upstream : nullptr;
  }
  static uint32_t& here(Scope& s) { return s.cgi_here; }
  static constexpr uint32_t kShift = Shift;
};
// Scope::cgi_here holds each module's own array bits (fastcgi 0, scgi 4,
// uwsgi 8, grpc 16) and their cache lists' (these three): no two overlap.
using FastcgiModule = CgiModule<&LocationSettings::fastcgi, 20>;
using UwsgiModule = CgiModule<&LocationSettings::uwsgi, 24>;
using ScgiModule = CgiModule<&LocationSettings::scgi, 28>;

enum : uint32_t { kValidHere = 1, kBypassHere = 2, kNoCacheHere = 4, kPurgeHere = 8 };

template <typename M>
CacheSettings& cache_of(Scope& s) {
  ProxyConfig& p = M::edit(s);
  auto c = p.cache ? std::make_shared<CacheSettings>(*p.cache) : std::make_shared<CacheSettings>();
  CacheSettings* raw = c.get();
  p.cache = std::move(c);
  return *raw;
}

// The first use of an array directive in a block replaces what it inherited.
template <typename M>
bool first_here(Scope& s, uint32_t bit) {
  const uint32_t b = bit << M::kShift;
  const bool first = !(M::here(s) & b);
  M::here(s) |= b;
  return first;
}

// The zone named `name` in this config, made (undefined) when new.
std::shared_ptr<CacheZoneConfig> zone_named(Compiler& c, std::string_view name) {
  for (auto& z : c.cfg().cache_zones)
    if (z->name == name) return z;
  auto z = std::make_shared<CacheZoneConfig>();
  z->name = std::string(name);
  c.cfg().cache_zones.push_back(z);
  return z;
}

// ---- proxy_cache_path -----------------------------------------------------------

Status parse_levels(const Node& n, std::string_view v, std::vector<int>& out) {
  while (!v.empty()) {
    const size_t colon = v.find(':');
    const std::string_view part = v.substr(0, colon);
    if (part != "1" && part != "2") return node_error(n, "invalid \"levels\" " + q(v));
    out.push_back(part[0] - '0');
    v = colon == std::string_view::npos ? std::string_view{} : v.substr(colon + 1);
    if (colon != std::string_view::npos && v.empty()) return node_error(n, "invalid \"levels\"");
  }
  if (out.size() > 3) return node_error(n, "invalid \"levels\"");
  return Ok{};
}

Status set_cache_path(Compiler& c, Scope&, const Node& n) {
  cache::ZoneParams p;
  p.path = c.full_path(n.args[0]);
  while (p.path.size() > 1 && p.path.back() == '/') p.path.pop_back();
  std::string name;
  for (size_t i = 1; i < n.args.size(); ++i) {
    std::string_view a = n.args[i];
    const size_t eq = a.find('=');
    const std::string_view key = a.substr(0, eq);
    const std::string_view v = eq == std::string_view::npos ? std::string_view{} : a.substr(eq + 1);
    int64_t num = 0;
    if (key == "levels") {
      auto st = parse_levels(n, v, p.levels);
      if (!st) return st;
    } else if (key == "keys_zone") {
      const size_t colon = v.find(':');
      if (colon == std::string_view::npos || colon == 0) return node_error(n, "invalid keys zone size " + q(a));
      if (!parse_size(v.substr(colon + 1), num) || num < 8 * 4096)
        return node_error(n, "invalid keys zone size " + q(a));
      name = std::string(v.substr(0, colon));
      p.keys_size = size_t(num);
    } else if (key == "inactive") {
      if (!parse_time_ms(v, num)) return node_error(n, "invalid inactive value " + q(a));
      p.inactive_ms = num;
    } else if (key == "max_size") {
      if (!parse_size(v, num)) return node_error(n, "invalid max_size value " + q(a));
      p.max_size = num;
    } else if (key == "use_temp_path") {
      if (v != "on" && v != "off") return node_error(n, "invalid use_temp_path value " + q(a));
      // Temporary files are always written in the zone's directory (one
      // rename into place), what nginx does with use_temp_path=off.
    } else if (key == "min_free") {
      if (!parse_size(v, num)) return node_error(n, "invalid min_free value " + q(a));
      p.min_free = num;
    } else if (key == "manager_files" || key == "loader_files" || key == "manager_sleep" ||
               key == "manager_threshold" || key == "loader_sleep" || key == "loader_threshold") {
      // The loader and manager pace themselves; these only need a valid value.
      uint64_t count = 0;
      if (!parse_number(v, count) && !parse_time_ms(v, num)) return node_error(n, "invalid " + q(a));
    } else {
      return node_error(n, "invalid parameter " + q(a));
    }
  }
  if (name.empty()) return node_error(n, q(n.name) + " must have \"keys_zone\" parameter");
  p.name = name;
  auto z = zone_named(c, name);
  if (z->defined) return node_error(n, "duplicate zone " + q(name));
  z->defined = true;
  z->zone = cache::Zone::acquire(p);
  return Ok{};
}

// ---- per-location settings ------------------------------------------------------

template <typename M>
Status set_cache(Compiler& c, Scope& s, const Node& n) {
  const std::string& v = n.args[0];
  if (v == "off") {
    cache_of<M>(s).zone = nullptr;
    cache_of<M>(s).zone_from = {};
    return Ok{};
  }
  Template zone_from;
  if (v.find('$') != std::string::npos) {
    auto t = compile_template(v);
    if (!t) return node_error(n, t.error());
    zone_from = std::move(*t);
  }
  // proxy_store set in this block excludes the cache; an inherited one is
  // turned off here (directives_upstream_files.cc).
  const std::string store = n.name.substr(0, n.name.find('_')) + "_store";
  if (std::find(s.seen.begin(), s.seen.end(), store) != s.seen.end() && M::edit(s).store != ProxyConfig::Store::off)
    return node_error(n, q(n.name) + " directive is incompatible with " + q(store));
  M::edit(s).store = ProxyConfig::Store::off;
  cache_of<M>(s).key_defaults_to_url = n.name == "proxy_cache";
  if (!zone_from.empty()) {
    cache_of<M>(s).zone = nullptr;
    cache_of<M>(s).zone_from = std::move(zone_from);
    return Ok{};
  }
  cache_of<M>(s).zone_from = {};
  auto z = zone_named(c, v);
  if (!z->defined) {
    // proxy_cache_path may come later in the http block; anywhere else it
    // must already be there.
    if (s.ctx != kHttp) return node_error(n, q(n.name) + " zone " + q(v) + " is unknown");
    s.after_plain.push_back([z, where = n.where(), name = n.name]() -> Status {
      if (z->defined) return Ok{};
      return make_error(where + q(name) + " zone " + q(z->name) + " is unknown");
    });
  }
  cache_of<M>(s).zone = z;
  return Ok{};
}

template <typename M>
Status set_key(Compiler&, Scope& s, const Node& n) {
  auto t = compile_template(n.args[0]);
  if (!t) return node_error(n, t.error());
  cache_of<M>(s).key = std::move(*t);
  return Ok{};
}

template <typename M>
Status set_valid(Compiler&, Scope& s, const Node& n) {
  CacheValid v;
  int64_t ms = 0;
  if (!parse_time_ms(n.args.back(), ms)) return invalid_value(n, n.args.back());
  v.seconds = ms / 1000;
  if (n.args.size() == 1) {
    v.codes = {200, 301, 302};
  } else {
    for (size_t i = 0; i + 1 < n.args.size(); ++i) {
      const std::string& a = n.args[i];
      if (a == "any") {
        v.any = true;
        continue;
      }
      uint64_t code = 0;
      if (!parse_number(a, code) || code < 100 || code > 599) return invalid_value(n, a);
      v.codes.push_back(int(code));
    }
  }
  const bool first = first_here<M>(s, kValidHere);
  auto& c = cache_of<M>(s);
  if (first) c.valid.clear();
  c.valid.push_back(std::move(v));
  return Ok{};
}

template <typename M>
Status set_methods(Compiler&, Scope& s, const Node& n) {
  uint32_t mask = kCacheGet | kCacheHead;
  for (const auto& a : n.args) {
    if (a == "GET") mask |= kCacheGet;
    else if (a == "HEAD") mask |= kCacheHead;
    else if (a == "POST") mask |= kCachePost;
    else return invalid_value(n, a);
  }
  cache_of<M>(s).methods = mask;
  return Ok{};
}

template <typename M, std::vector<Template> CacheSettings::*F, uint32_t Bit>
Status set_predicates(Compiler&, Scope& s, const Node& n) {
  std::vector<Template> list;
  for (const auto& a : n.args) {
    auto t = compile_template(a);
    if (!t) return node_error(n, t.error());
    list.push_back(std::move(*t));
  }
  const bool first = first_here<M>(s, Bit);
  auto& c = cache_of<M>(s);
  if (first) (c.*F).clear();
  for (auto& t : list) (c.*F).push_back(std::move(t));
  return Ok{};
}

// `proxy_cache_purge` has three forms, told apart by their words:
// - nginx's own, conditions (`proxy_cache_purge $purge_method;`): a
//   request for which one is non-empty and not "0" purges its key;
// - the ngx_cache_purge module's same-location form, `on|off|METHOD [from
//   all|ADDRESS...]` (a first word in capitals would, read as a constant
//   condition, purge on every request);
// - its separate-location form, `ZONE KEY` (two words, the first without
//   variables).
enum class PurgeForm : uint8_t { conditions, by_method, location };

PurgeForm purge_form(const Node& n) {
  const std::string& first = n.args[0];
  const bool constant = first.find('$') == std::string::npos;
  if (n.args.size() == 2 && constant) return PurgeForm::location;
  if (first == "on" || first == "off") return PurgeForm::by_method;
  for (size_t i = 1; i < n.args.size(); ++i)
    if (n.args[i] == "from" || n.args[i] == "purge_all") return PurgeForm::by_method;
  const bool capitals =
      std::all_of(first.begin(), first.end(), [](char ch) { return (ch >= 'A' && ch <= 'Z') || ch == '-' || ch == '_'; });
  return constant && capitals ? PurgeForm::by_method : PurgeForm::conditions;
}

template <typename M>
Status set_purge_by_method(Compiler& c, Scope& s, const Node& n) {
  const std::string& first = n.args[0];
  if (first == "off") {
    cache_of<M>(s).purge_by_method = nullptr;
    return Ok{};
  }
  auto p = std::make_shared<PurgeByMethod>();
  p->method = first == "on" ? "PURGE" : first;
  size_t i = 1;
  if (i < n.args.size() && n.args[i] == "purge_all") {
    p->all_entries = true;
    ++i;
  }
  if (i < n.args.size()) {
    if (n.args[i] != "from") return node_error(n, "invalid parameter " + q(n.args[i]) + ", expected \"from\" keyword");
    if (++i == n.args.size()) return node_error(n, "invalid number of arguments in " + q(n.name) + " directive");
    if (n.args[i] != "all") {
      for (; i < n.args.size(); ++i) {
        if (n.args[i] == "all" || n.args[i] == "unix:") return node_error(n, "invalid parameter " + q(n.args[i]));
        auto rule = parse_access_rule(c, n, n.args[i], true);
        if (!rule) return node_error(n, "invalid parameter " + q(n.args[i]));
        p->from.push_back(*rule);
      }
    }
  }
  cache_of<M>(s).purge_by_method = std::move(p);
  return Ok{};
}

template <typename M>
Status set_purge_location(Compiler& c, Scope& s, const Node& n) {
  if (s.ctx != kLocation) return node_error(n, q(n.name) + " (separate location syntax) is not allowed here");
  auto key = compile_template(n.args[1]);
  if (!key) return node_error(n, key.error());
  auto p = std::make_shared<CachePurgeLocation>();
  p->key = std::move(*key);
  auto zone = zone_named(c, n.args[0]);
  if (!zone->defined) return node_error(n, q(n.name) + " zone " + q(n.args[0]) + " is unknown");
  p->zone = std::move(zone);
  s.settings->cache_purge_location = std::move(p);
  // The location answers every request itself: a pass or a cache set in
  // it too would be ignored, so either is an error, in any order (a cache
  // inherited from the server is fine).
  s.after_plain.push_back([&s, where = n.where(), name = n.name]() -> Status {
    const std::string module = name.substr(0, name.find('_'));
    const ProxyConfig* up = M::peek(*s.settings);
    if (up && up->proxies()) return make_error(where + q(name) + " is incompatible with " + q(module + "_pass"));
    const std::string cache = module + "_cache";
    if (std::find(s.seen.begin(), s.seen.end(), cache) != s.seen.end())
      return make_error(where + q(name) + " is incompatible with " + q(cache));
    return Ok{};
  });
  return Ok{};
}

template <typename M>
Status set_purge(Compiler& c, Scope& s, const Node& n) {
  switch (purge_form(n)) {
    case PurgeForm::location:
      return set_purge_location<M>(c, s, n);
    case PurgeForm::by_method:
      return set_purge_by_method<M>(c, s, n);
    case PurgeForm::conditions:
      break;
  }
  return set_predicates<M, &CacheSettings::purge, kPurgeHere>(c, s, n);
}

template <typename M>
Status set_min_uses(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v == 0 || v > 1'000'000) return invalid_value(n, n.args[0]);
  cache_of<M>(s).min_uses = unsigned(v);
  return Ok{};
}

template <typename M>
Status set_ignore_headers(Compiler&, Scope& s, const Node& n) {
  uint32_t mask = 0;
  if (Status st = cgi::parse_ignore_headers(n, mask); !st) return st;
  cache_of<M>(s).ignore_headers = mask;
  M::edit(s).ignore_headers = mask;  // the proxy acts on X-Accel-* unless named
  return Ok{};
}

template <typename M, bool CacheSettings::*F>
Status set_flag(Compiler&, Scope& s, const Node& n) {
  cache_of<M>(s).*F = n.args[0] == "on";
  return Ok{};
}

template <typename M, Ms CacheSettings::*F>
Status set_time(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  cache_of<M>(s).*F = Ms(ms);
  return Ok{};
}

template <typename M>
Status set_use_stale(Compiler&, Scope& s, const Node& n) {
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"error", kStaleError},       {"timeout", kStaleTimeout},   {"invalid_header", kStaleInvalidHeader},
      {"updating", kStaleUpdating}, {"http_500", kStaleHttp500},  {"http_502", kStaleHttp502},
      {"http_503", kStaleHttp503},  {"http_504", kStaleHttp504},  {"http_403", kStaleHttp403},
      {"http_404", kStaleHttp404},  {"http_429", kStaleHttp429},
  };
  uint32_t mask = 0;
  bool off = false;  // "off" among other values wins, as nginx's merge
  for (const auto& a : n.args) {
    if (a == "off") {
      off = true;
      continue;
    }
    auto it = std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& k) { return k.first == a; });
    if (it == std::end(kNames)) return invalid_value(n, a);
    mask |= it->second;
  }
  cache_of<M>(s).use_stale = off ? 0 : mask;
  return Ok{};
}

Status accept_size(Compiler&, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

// One table's rows for a module whose directives start with `prefix`.
#define TORII_CACHE_ROWS(prefix, M)                                                                        \
  {prefix "_cache", kHSL, kArgs1, true, false, kMain, &set_cache<M>},                                      \
      {prefix "_cache_key", kHSL, kArgs1, true, false, kMain, &set_key<M>},                                \
      {prefix "_cache_valid", kHSL, kArgs1More, false, false, kMain, &set_valid<M>},                       \
      {prefix "_cache_methods", kHSL, kArgs1More, true, false, kMain, &set_methods<M>},                    \
      {prefix "_cache_bypass", kHSL, kArgs1More, false, false, kMain,                                      \
       &set_predicates<M, &CacheSettings::bypass, kBypassHere>},                                           \
      {prefix "_no_cache", kHSL, kArgs1More, false, false, kMain,                                          \
       &set_predicates<M, &CacheSettings::no_cache, kNoCacheHere>},                                        \
      {prefix "_cache_purge", kHSL, kArgs1More, false, false, kMain, &set_purge<M>},                        \
      {prefix "_cache_min_uses", kHSL, kArgs1, true, false, kMain, &set_min_uses<M>},                      \
      {prefix "_cache_convert_head", kHSL, kFlag, true, false, kMain,                                      \
       &set_flag<M, &CacheSettings::convert_head>},                                                        \
      {prefix "_cache_lock", kHSL, kFlag, true, false, kMain, &set_flag<M, &CacheSettings::lock>},          \
      {prefix "_cache_lock_timeout", kHSL, kArgs1, true, false, kMain,                                     \
       &set_time<M, &CacheSettings::lock_timeout>},                                                        \
      {prefix "_cache_lock_age", kHSL, kArgs1, true, false, kMain, &set_time<M, &CacheSettings::lock_age>}, \
      {prefix "_cache_use_stale", kHSL, kArgs1More, true, false, kMain, &set_use_stale<M>},                \
      {prefix "_cache_revalidate", kHSL, kFlag, true, false, kMain, &set_flag<M, &CacheSettings::revalidate>}, \
      {prefix "_cache_background_update", kHSL, kFlag, true, false, kMain,                               \
       &set_flag<M, &CacheSettings::background_update>},                                                  \
      {prefix "_cache_max_range_offset", kHSL, kArgs1, true, false, kMain, &accept_size}

const DirectiveSpec kCacheDirectives[] = {
    {"proxy_cache_path", kHttp, kArgs2More, false, false, kMain, &set_cache_path},
    {"fastcgi_cache_path", kHttp, kArgs2More, false, false, kMain, &set_cache_path},
    {"uwsgi_cache_path", kHttp, kArgs2More, false, false, kMain, &set_cache_path},
    {"scgi_cache_path", kHttp, kArgs2More, false, false, kMain, &set_cache_path},
    {"proxy_ignore_headers", kHSL, kArgs1More, true, false, kMain, &set_ignore_headers<ProxyModule>},
    {"fastcgi_ignore_headers", kHSL, kArgs1More, true, false, kMain, &set_ignore_headers<FastcgiModule>},
    {"uwsgi_ignore_headers", kHSL, kArgs1More, true, false, kMain, &set_ignore_headers<UwsgiModule>},
    {"scgi_ignore_headers", kHSL, kArgs1More, true, false, kMain, &set_ignore_headers<ScgiModule>},
    TORII_CACHE_ROWS("proxy", ProxyModule),
    TORII_CACHE_ROWS("fastcgi", FastcgiModule),
    TORII_CACHE_ROWS("uwsgi", UwsgiModule),
    TORII_CACHE_ROWS("scgi", ScgiModule),
};

#undef TORII_CACHE_ROWS

}  // namespace

std::span<const DirectiveSpec> cache_directives() { return kCacheDirectives; }

}  // namespace torii::config
