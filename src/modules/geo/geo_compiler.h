// Compiles a geo {} block into a GeoConfig (config/geo_config.h).
#pragma once

#include "config/directives.h"

namespace torii::geo {

// The `geo [$address] $variable { ... }` directive's setter.
Status set_geo(config::Compiler& c, config::Scope& scope, const config::Node& n);

}  // namespace torii::geo
