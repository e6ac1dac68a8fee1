#include "cache/metrics.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "cache/zone.h"
#include "config/cache_config.h"
#include "modules/metrics/text_format.h"

namespace torii::cache {

using metrics::head;

namespace {

void row(std::string& out, const char* name, const std::string& zone, const char* status, uint64_t v) {
  out += name;
  out += "{zone=\"";
  metrics::label_value(out, zone);
  if (status) {
    out += "\",status=\"";
    out += status;
  }
  out += "\"} ";
  out += std::to_string(v);
  out += '\n';
}

}  // namespace

void render_metrics(const config::Config& cfg, std::string& out) {
  if (cfg.cache_zones.empty()) return;
  head(out, "torii_cache_requests_total", "counter", "Cache lookups by $upstream_cache_status, per zone.");
  for (const auto& z : cfg.cache_zones) {
    if (!z->zone) continue;
    const ZoneCounters& c = z->zone->counters;
    const std::pair<const char*, const std::atomic<uint64_t>*> statuses[] = {
        {"HIT", &c.hit},         {"MISS", &c.miss},         {"EXPIRED", &c.expired},
        {"STALE", &c.stale},     {"UPDATING", &c.updating}, {"REVALIDATED", &c.revalidated},
        {"BYPASS", &c.bypass},
    };
    for (const auto& [status, counter] : statuses)
      row(out, "torii_cache_requests_total", z->name, status, counter->load(std::memory_order_relaxed));
  }
  head(out, "torii_cache_stored_total", "counter", "Responses written into the cache, per zone.");
  for (const auto& z : cfg.cache_zones)
    if (z->zone) row(out, "torii_cache_stored_total", z->name, nullptr, z->zone->counters.stored.load());
  head(out, "torii_cache_evicted_total", "counter", "Entries removed for inactive or max_size, per zone.");
  for (const auto& z : cfg.cache_zones)
    if (z->zone) row(out, "torii_cache_evicted_total", z->name, nullptr, z->zone->counters.evicted.load());
  head(out, "torii_cache_size_bytes", "gauge", "Bytes the zone's entries take on disk.");
  for (const auto& z : cfg.cache_zones)
    if (z->zone) row(out, "torii_cache_size_bytes", z->name, nullptr, uint64_t(std::max<int64_t>(0, z->zone->disk_bytes())));
}

}  // namespace torii::cache
