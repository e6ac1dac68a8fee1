// nginx's User-Agent rules for the browsers some directives single out
// (gzip_disable msie6, keepalive_disable msie6 / safari, $msie): plain substring
// tests, case-sensitive, exactly as nginx's request parser makes them.
#pragma once

#include <string_view>

namespace torii::http {

// "MSIE " with at least three more characters, unless it says Opera
// (nginx's msie flag: $msie).
bool is_msie(std::string_view user_agent);

// MSIE 4.x, 5.x, and 6.x without "SV1"; never Opera.
bool is_msie6(std::string_view user_agent);

// "Safari/" with "Mac OS X", unless it says MSIE or Opera, or Gecko/ or
// Chrome/ (which nginx tests first).
bool is_safari(std::string_view user_agent);

}  // namespace torii::http
