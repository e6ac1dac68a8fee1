// $fastcgi_script_name and $fastcgi_path_info: the URI split by the
// location's fastcgi_split_path_info (its two captures; no match or no
// regex: all of the URI is the script name), and fastcgi_index appended to
// a script name ending in '/'.
#pragma once

#include <string>

namespace torii::http {
class Exchange;
}

namespace torii::handlers::fastcgi {

void append_script_name(const http::Exchange& ex, std::string& out);
void append_path_info(const http::Exchange& ex, std::string& out);

}  // namespace torii::handlers::fastcgi
