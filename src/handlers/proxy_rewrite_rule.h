// One proxy_redirect / proxy_cookie_domain / proxy_cookie_path rule applied
// to a value, with nginx's matching: a regex anywhere (its captures become
// the request's, for the replacement), else a prefix or a whole domain.
#pragma once

#include <string>

#include "config/proxy_config.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers {

enum class RuleMatch : unsigned char {
  prefix,  // FROM begins the value (proxy_redirect, cookie path); case matters
  domain,  // FROM is the whole value, a leading dot aside, in any case
};

// True when the rule matched and `value` was rewritten.
bool apply_rewrite_rule(http::Exchange& ex, const config::ProxyRedirect& rule, RuleMatch how, std::string& value);

}  // namespace torii::handlers
