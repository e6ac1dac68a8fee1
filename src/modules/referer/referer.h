// The referer module (nginx's ngx_http_referer_module): $invalid_referer,
// judged from the request's Referer field and the location's
// `valid_referers`.
#pragma once

#include <string>

namespace torii::http {
class Exchange;
}

namespace torii::referer {

// True when the Referer is not one `valid_referers` accepts ($invalid_referer
// is "1"); false when it is, or when the location has no valid_referers.
bool invalid(const http::Exchange& ex);

}  // namespace torii::referer
