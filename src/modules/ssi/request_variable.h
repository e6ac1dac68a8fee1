// A request variable looked up by its name while a response is being
// filtered (SSI's `$name` in a page), where config templates resolve
// their names when the config loads: built-in variables and prefix
// families, `set` variables, map, geo and split_clients variables.
#pragma once

#include <string>
#include <string_view>

namespace torii::http {
class Exchange;
}

namespace torii::ssi {

// Appends the variable's value; false when the name is unknown or it has
// no value for this request.
bool request_variable(const http::Exchange& ex, std::string_view name, std::string& out);

}  // namespace torii::ssi
