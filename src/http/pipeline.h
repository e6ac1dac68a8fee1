// The request pipeline every codec calls once a head is decoded: server
// rewrite → location → body size → location rewrite (return, rewrite, set,
// if) → access (limit_except, allow/deny) → proxy | static → error_page.
// Explicit steps, one place each.
#pragma once

namespace torii::config {
struct Return;
}

namespace torii::http {

class Exchange;

// Runs the request to a response. With today's handlers the response is
// complete (finish() called) when this returns, unless the connection is to
// be closed with no response (return 444: ex.close_connection and no head).
void run_request(Exchange& ex);

// Sends the response for an error or redirect status: error_page if one
// applies, else the built-in page. Also used by codecs for bad requests.
void send_error(Exchange& ex, int status);

// The response of a `return` directive: a body, a redirect, an error page,
// or (444) a closed connection.
void send_return(Exchange& ex, const config::Return& ret);

}  // namespace torii::http
