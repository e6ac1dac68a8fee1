// $geoip_* for one request: the client's address (after realip, then
// X-Forwarded-For from a geoip_proxy address) looked up, when the variable
// is read, in the http block's database for the field.
#pragma once

#include <cstdint>
#include <string>

namespace torii::http {
class Exchange;
}

namespace torii::geoip {

// `field` is a geoip::Field (Variable::index). False: no value (no such
// database configured, or the address is not in it).
bool append_value(const http::Exchange& ex, uint32_t field, std::string& out);

}  // namespace torii::geoip
