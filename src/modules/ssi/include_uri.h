// The URI of an SSI include (nginx's ADD_PREFIX and
// ngx_http_parse_unsafe_uri): relative to the including page's directory,
// arguments after '?', %XX decoded; refused when empty, with a NUL or a
// ".." segment.
#pragma once

#include <string>
#include <string_view>

namespace torii::ssi {

// `page` is the including request's URI. False for an unsafe URI.
bool include_uri(std::string_view uri, std::string_view page, std::string& path, std::string& args);

}  // namespace torii::ssi
