// auth_delay (ngx_http_core_module): a 401 from the access phase
// (auth_basic, auth_request) is answered only after this long, so that
// how fast a wrong password is refused tells an attacker nothing. As in
// nginx only 401 is delayed: a 403 (deny rules, a 403 from auth_request)
// goes out at once.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::access {

// Sends the access phase's refusal `status`, after the location's
// auth_delay when it is a 401.
void send_refusal(http::Exchange& ex, int status);

}  // namespace torii::access
