// The request pipeline every codec calls once a head is decoded: server
// rewrite → location → body size → location rewrite (return, rewrite, set,
// if) → preaccess (limit_req, limit_conn) → access (limit_except,
// allow/deny, auth_basic, auth_request, satisfy) → proxy | static →
// error_page.
// Explicit steps, one place each.
#pragma once

#include <string_view>

namespace torii::config {
struct Return;
}

namespace torii::http {

class Exchange;

// Runs the request to a response. With today's handlers the response is
// complete (finish() called) when this returns, unless the connection is to
// be closed with no response (return 444: ex.close_connection and no head).
void run_request(Exchange& ex);

// Where a request that waited in a phase goes on from, once its wait is
// over: after a limit_req delay (limit_conn), after an auth subrequest
// (content), after the mirror module read the body (mirrored: the content
// handler, with no second mirror).
enum class Phase : unsigned char { start, limit_conn, access, content, mirrored };
void resume_request(Exchange& ex, Phase at);

// The upstream's X-Accel-Redirect: the request goes on at `target`, a URI
// (method GET unless HEAD, args from the target only) or a named location,
// as nginx's internal redirect. An unsafe URI (a ".." segment, NUL) is 404.
void accel_redirect(Exchange& ex, std::string_view target);

// Sends the response for an error or redirect status: error_page if one
// applies, else the built-in page. Also used by codecs for bad requests.
void send_error(Exchange& ex, int status);

// The response of a `return` directive: a body, a redirect, an error page,
// or (444) a closed connection.
void send_return(Exchange& ex, const config::Return& ret);

}  // namespace torii::http
