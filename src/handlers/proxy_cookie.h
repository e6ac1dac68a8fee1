// proxy_cookie_domain, proxy_cookie_path and proxy_cookie_flags on one of
// the upstream's Set-Cookie values, as nginx's proxy module edits them:
// the value is split into `name=value` and its attributes, the Domain and
// Path attributes go through their rules (the first matching rule of each),
// the first proxy_cookie_flags line naming the cookie adds, changes or
// removes Secure, HttpOnly and SameSite, and a changed cookie is joined
// again with "; ".
#pragma once

#include <string>

#include "config/proxy_config.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers {

// True when the value changed.
bool rewrite_set_cookie(http::Exchange& ex, const config::ProxyConfig& p, std::string& value);

}  // namespace torii::handlers
