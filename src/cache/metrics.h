// The cache zones' counters in the Prometheus text the metrics handler
// serves: lookups by $upstream_cache_status, entries stored and evicted,
// bytes on disk, per zone.
#pragma once

#include <string>

#include "config/config.h"

namespace torii::cache {

void render_metrics(const config::Config& cfg, std::string& out);

}  // namespace torii::cache
