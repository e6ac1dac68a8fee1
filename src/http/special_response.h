// The built-in pages for errors and redirects, and absolute Location URLs.
#pragma once

#include <string>
#include <string_view>

namespace torii::http {

class Exchange;

// Sends `status` with the built-in HTML page (nginx's codes only; none for
// HEAD),
// keeping any headers already put in ex.response (Location, Content-Range).
void write_special_response(Exchange& ex, int status);

// "/path" -> "http://host[:port]/path" for Location, as nginx's
// absolute_redirect does; absolute URLs pass unchanged.
std::string absolute_location(const Exchange& ex, std::string_view url);

}  // namespace torii::http
