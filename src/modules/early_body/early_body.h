// client_body_early_read COND... (nginx 1.29, http and server): when one of
// the server's conditions renders non-empty and not "0" (nginx's
// predicates, e.g. a map of $http_content_type), the request's body is read
// whole right after its head: before the post-read, server rewrite and
// location phases, under the server's own body settings
// (client_max_body_size, client_body_buffer_size, client_body_timeout,
// client_body_temp_path), whatever the location chosen later says. The
// location's handler then reads the stored copy (http/whole_body.h).
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::early_body {

// True when the request is taken: its body is being read and `then` runs
// once it is whole, or it was answered (a 413 for a Content-Length past the
// server's client_max_body_size). False: go on at once.
bool start(http::Exchange& ex, void (*then)(http::Exchange&));

}  // namespace torii::early_body
