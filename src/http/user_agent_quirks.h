// nginx's User-Agent rules for the browsers some directives single out
// (gzip_disable msie6, keepalive_disable msie6 / safari): plain substring
// tests, case-sensitive, exactly as nginx's request parser makes them.
#pragma once

#include <string_view>

namespace torii::http {

// MSIE 4.x, 5.x, and 6.x without "SV1"; never Opera.
bool is_msie6(std::string_view user_agent);

// "Safari/" with "Mac OS X", unless it says MSIE or Opera, or Gecko/ or
// Chrome/ (which nginx tests first).
bool is_safari(std::string_view user_agent);

}  // namespace torii::http
