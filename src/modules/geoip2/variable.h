// A geoip2 {} variable for one request: the address (source=, or the
// client after realip, then X-Forwarded-For from a geoip2_proxy address)
// looked up when the variable is read; and auto_reload's check once the
// request is over (the module's log phase).
#pragma once

#include <string>
#include <string_view>

namespace torii::http {
class Exchange;
}

namespace torii::geoip2 {

// `arg` is the variable's index in Geoip2Config::variables (Variable::arg).
// False: not found (no value and no default).
bool append_value(const http::Exchange& ex, std::string_view arg, std::string& out);

// The http block's databases with auto_reload are looked at again when due.
void after_request(const http::Exchange& ex);

}  // namespace torii::geoip2
