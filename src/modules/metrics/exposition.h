// The Prometheus text format (0.0.4) of every worker's counters summed,
// the process's reload counts and the upstream servers' state.
#pragma once

#include <string>

#include "config/config.h"

namespace torii::metrics {

std::string render_prometheus(const config::Config& cfg);

}  // namespace torii::metrics
