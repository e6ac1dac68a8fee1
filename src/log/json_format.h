// torii's built-in "json" log format (access_log PATH json;): one JSON
// object per line, values JSON-escaped. The fields are listed in
// docs/OPERATIONS.md; a log_format named "json" in the config replaces it.
#pragma once

#include <memory>

#include "config/config.h"

namespace torii::log {

std::shared_ptr<config::LogFormat> builtin_json_format();

}  // namespace torii::log
