// If-Modified-Since against a response's Last-Modified, under the
// location's `if_modified_since` (nginx's not-modified filter).
#pragma once

#include <cstdint>
#include <string_view>

#include "config/core_settings.h"

namespace torii::http {

// True when the response counts as not modified (a 304): off never; exact
// when the dates are the same second; before when the response is not
// newer than the date. A value that is not a date never matches.
bool not_modified_since(config::CoreSettings::IfModifiedSince mode, std::string_view since, int64_t last_modified);

}  // namespace torii::http
