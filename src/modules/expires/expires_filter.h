// The expires part of nginx's headers filter: Expires and Cache-Control
// from the location's `expires`, its value rendered per request when it
// has variables.
#pragma once

#include <cstdint>

#include "config/config.h"
#include "http/response.h"

namespace torii::http {
class Exchange;
}

namespace torii::expires {

void apply(const config::Expires& e, const http::Exchange& ex, int64_t now_sec, http::ResponseHead& head);

}  // namespace torii::expires
