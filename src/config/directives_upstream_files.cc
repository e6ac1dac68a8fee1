// The files the proxy, FastCGI, uwsgi and SCGI modules write: *_store,
// *_store_access and *_temp_path, one setter each for the four modules
// (config/upstream_settings picks the module's settings by the name).
#include <algorithm>
#include <array>

#include "config/cache_config.h"
#include "core/quote.h"
#include "config/file_access.h"
#include "config/upstream_settings.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

bool seen_here(const Scope& s, const std::string& name) {
  return std::find(s.seen.begin(), s.seen.end(), name) != s.seen.end();
}

// *_store on | off | STRING. A cache set in the same block is an error; an
// inherited one is turned off here, as nginx's merge does.
Status set_store(Compiler& c, Scope& s, const Node& n) {
  const std::string& v = n.args[0];
  const std::string module(upstream_module_of(n.name));
  if (v == "off") {
    ProxyConfig& p = edit_upstream_settings(s, n.name);
    p.store = ProxyConfig::Store::off;
    p.store_path = Template{};
    return Ok{};
  }
  if (v.empty()) return node_error(n, "empty path");
  const ProxyConfig* inherited = upstream_settings(s, n.name);
  const bool cache_on = inherited && inherited->cache && inherited->cache->enabled();
  if (cache_on && seen_here(s, module + "_cache"))
    return node_error(n, q(n.name) + " directive is incompatible with " + q(module + "_cache"));
  Template path;
  if (v != "on") {
    auto t = compile_template(v);
    if (!t) return node_error(n, t.error());
    path = std::move(*t);
  }
  ProxyConfig& p = edit_upstream_settings(s, n.name);
  if (cache_on) {
    auto off = std::make_shared<CacheSettings>(*p.cache);
    off->zone = nullptr;
    p.cache = std::move(off);
  }
  p.store = v == "on" ? ProxyConfig::Store::on : ProxyConfig::Store::path;
  p.store_path = std::move(path);
  if (p.temp_path.empty()) p.temp_path = c.full_path(module + "_temp");
  return Ok{};
}

Status set_store_access(Compiler&, Scope& s, const Node& n) {
  uint16_t mode = 0;
  if (Status st = parse_file_access(n, mode); !st) return st;
  edit_upstream_settings(s, n.name).store_access = mode;
  return Ok{};
}

// *_temp_path PATH [L1 [L2 [L3]]]: where a stored response is written
// before its rename, spread over level folders as nginx's (core/temp_file).
Status set_temp_path(Compiler& c, Scope& s, const Node& n) {
  std::array<uint8_t, 3> levels{};
  if (auto st = parse_temp_levels(n, levels); !st) return st;
  std::string path = c.full_path(n.args[0]);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  ProxyConfig& p = edit_upstream_settings(s, n.name);
  p.temp_path = std::move(path);
  p.temp_levels = levels;
  return Ok{};
}

#define UPSTREAM_FILE_ROWS(m)                                                              \
  {m "_store", kHSL, kArgs1, true, false, kMain, &set_store},                              \
  {m "_store_access", kHSL, kArgs1 | kArgs2 | kArgs3, true, false, kMain, &set_store_access}, \
  {m "_temp_path", kHSL, kArgs1More, true, false, kMain, &set_temp_path}

constexpr DirectiveSpec kUpstreamFileDirectives[] = {
    UPSTREAM_FILE_ROWS("proxy"),
    UPSTREAM_FILE_ROWS("fastcgi"),
    UPSTREAM_FILE_ROWS("uwsgi"),
    UPSTREAM_FILE_ROWS("scgi"),
};

#undef UPSTREAM_FILE_ROWS

}  // namespace

std::span<const DirectiveSpec> upstream_file_directives() { return kUpstreamFileDirectives; }

}  // namespace torii::config
