// The proxy cache's settings: a zone (proxy_cache_path, by name in the
// config; its store lives in cache::Zone and outlives reloads) and what a
// location asks of it (proxy_cache, proxy_cache_key, proxy_cache_valid...),
// merged down http -> server -> location like the other proxy_* settings.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/template.h"

namespace torii::cache {
class Zone;  // cache/zone.h
}

namespace torii::config {

// proxy_cache_path: one zone by name. Made on the first mention of the
// name (proxy_cache may come before proxy_cache_path in the http block);
// `defined` once its proxy_cache_path ran.
struct CacheZoneConfig {
  std::string name;
  bool defined = false;
  std::shared_ptr<cache::Zone> zone;
};

// proxy_cache_valid [code ...|any] time.
struct CacheValid {
  std::vector<int> codes;  // empty with `any`
  bool any = false;
  int64_t seconds = 0;
};


// proxy_cache_use_stale conditions (error, timeout... as proxy_next_upstream
// names them) and `updating`.
enum CacheStale : uint32_t {
  kStaleError = 1 << 0,
  kStaleTimeout = 1 << 1,
  kStaleInvalidHeader = 1 << 2,
  kStaleUpdating = 1 << 3,
  kStaleHttp500 = 1 << 4,
  kStaleHttp502 = 1 << 5,
  kStaleHttp503 = 1 << 6,
  kStaleHttp504 = 1 << 7,
  kStaleHttp403 = 1 << 8,
  kStaleHttp404 = 1 << 9,
  kStaleHttp429 = 1 << 10,
};

// proxy_cache_methods: GET and HEAD are always in.
enum CacheMethod : uint32_t { kCacheGet = 1, kCacheHead = 2, kCachePost = 4 };

// The ngx_cache_purge module's same-location form, `proxy_cache_purge
// PURGE from 127.0.0.1;`: a request with this method (case counts) purges
// its own key; from the listed addresses only, when some are listed.
struct PurgeByMethod {
  std::string method;
  bool all_entries = false;      // `METHOD purge_all`: the whole zone, whatever the key
  std::vector<AccessRule> from;  // empty: from anywhere (`from all`, or no list)
};

// That module's separate-location form, `proxy_cache_purge ZONE KEY;`.
struct CachePurgeLocation {
  std::shared_ptr<const CacheZoneConfig> zone;
  Template key;
};

struct CacheSettings {
  std::shared_ptr<const CacheZoneConfig> zone;  // null: proxy_cache off (or zone_from decides)
  // proxy_cache $var: the zone's name, rendered per request; empty or "off"
  // is no cache for that request, an unknown name a 500 (as nginx).
  Template zone_from;
  // Empty: proxy_cache's default, the upstream URL (cache/front.cc); the
  // FastCGI, SCGI and uwsgi caches have none, so every request has the
  // empty key, as nginx's (which warns at load).
  Template key;
  bool key_defaults_to_url = false;  // proxy_cache
  std::vector<CacheValid> valid;
  uint32_t methods = kCacheGet | kCacheHead;
  std::vector<Template> bypass;    // proxy_cache_bypass
  std::vector<Template> no_cache;  // proxy_no_cache
  std::vector<Template> purge;     // proxy_cache_purge: the request removes its entry
  std::shared_ptr<const PurgeByMethod> purge_by_method;  // null: off
  unsigned min_uses = 1;
  uint32_t ignore_headers = 0;
  bool convert_head = true;
  bool lock = false;
  Ms lock_timeout{5000};
  Ms lock_age{5000};
  uint32_t use_stale = 0;
  bool background_update = false;
  bool revalidate = false;

  bool enabled() const { return (zone && zone->zone) || !zone_from.empty(); }
};

}  // namespace torii::config
