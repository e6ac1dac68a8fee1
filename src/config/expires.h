// The value of `expires`, as nginx reads it: at load for a constant, and
// per request for one with variables (modules/expires).
#pragma once

#include <cstdint>
#include <string_view>

#include "config/config.h"

namespace torii::config {

// "epoch", "max", "off" (not after "modified"), "@15h30m" (daily, not
// after "modified", under 24 hours), "[+|-]TIME". `kind` comes in as
// after_access or after_modified and leaves as what the value says.
// Returns null, or nginx's reason for refusing the value.
const char* parse_expires(std::string_view value, Expires::Kind& kind, int64_t& seconds);

}  // namespace torii::config
