// The health_check line of an upstream {} block.
#pragma once

#include "config/ast.h"
#include "config/upstream_config.h"
#include "core/result.h"

namespace torii::config {

Status parse_health_check(UpstreamGroupConfig& g, const Node& n);

}  // namespace torii::config
