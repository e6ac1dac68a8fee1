// Compiles a geo {} block into a GeoConfig (config/geo_config.h).
#pragma once

#include "config/directives.h"

namespace torii::config {
struct GeoConfig;
}

namespace torii::geo {

// The block's lines (networks, `ranges`, `default`, `delete`, `include`d
// files' lines) into `g`'s tables, frozen for lookups. `proxy` and
// `proxy_recursive` are http's only: stream reads them as networks
// (nginx's stream geo has neither).
Status read_geo_block(config::Compiler& c, const config::Node& n, config::GeoConfig& g, bool http);

// The `geo [$address] $variable { ... }` directive's setter.
Status set_geo(config::Compiler& c, config::Scope& scope, const config::Node& n);

}  // namespace torii::geo
