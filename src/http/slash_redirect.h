// The 301 that adds a slash to a request's path: the static handler's for a
// directory, and nginx's auto_redirect for a request one slash short of a
// location that passes requests upstream (proxy_pass, fastcgi_pass...).
#pragma once

#include <string>
#include <string_view>

namespace torii::http {

class Exchange;

// A decoded path made safe for a Location header: anything that is not
// plainly allowed in a URI path (controls, spaces, '%', '?', '#', non-ASCII)
// is percent-encoded, so a "%0d%0a" in the request can't split headers.
void append_escaped_path(std::string& out, std::string_view path);

// The query as received, minus anything that could break a header line
// (a codec should have refused those already).
void append_query(std::string& out, std::string_view query);

// "PATH/" with the request's query kept, made absolute as the location's
// absolute_redirect, server_name_in_redirect and port_in_redirect say.
std::string slash_redirect_location(const Exchange& ex);

// Answers the request with that 301 (error_page may still take it).
void send_slash_redirect(Exchange& ex);

}  // namespace torii::http
