// Entry points around config::load() for callers that hold the text itself
// (the fuzzer, tests).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "config/config.h"

namespace torii::config {

// Compiles `text` as if it were the main file named `name`. Includes resolve
// against `prefix` when allowed; off by default so untrusted text cannot read
// other files.
Result<std::shared_ptr<const Config>> load_from_string(std::string_view text, const std::string& prefix,
                                                       bool allow_include = false,
                                                       const std::string& name = "string");

}  // namespace torii::config
