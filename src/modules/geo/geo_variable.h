// The value of a geo {} variable for one request.
#pragma once

#include <string>
#include <string_view>

namespace torii::http {
class Exchange;
}

namespace torii::config {
struct GeoConfig;
}
namespace torii::net {
struct IpAddress;
}

namespace torii::geo {

// The block's value for an address (family 0: none, nginx's
// 255.255.255.255); stream's geo looks up with it too.
const std::string& geo_lookup(const config::GeoConfig& g, net::IpAddress ip);

// `arg` is the geo block's index in Config::geos (Variable::arg).
bool append_value(const http::Exchange& ex, std::string_view arg, std::string& out);

}  // namespace torii::geo
