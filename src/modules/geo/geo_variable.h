// The value of a geo {} variable for one request.
#pragma once

#include <string>
#include <string_view>

namespace torii::http {
class Exchange;
}

namespace torii::geo {

// `arg` is the geo block's index in Config::geos (Variable::arg).
bool append_value(const http::Exchange& ex, std::string_view arg, std::string& out);

}  // namespace torii::geo
