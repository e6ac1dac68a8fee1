// add_trailer (ngx_http_headers_module): trailer fields after the body of
// the client's own response (not a subrequest's), for nginx's list of
// statuses unless `always`, a field whose value renders empty left out.
// nginx has a response that expects them sent chunked over HTTP/1.1 (its
// length dropped) and as a trailing HEADERS frame over HTTP/2 and HTTP/3;
// an HTTP/1.0 client gets none.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace torii::http {
class Exchange;
struct ResponseHead;
}

namespace torii::trailers {

// At send_head: whether the response will carry trailers; if so, an
// HTTP/1.1 head loses its length so that it goes chunked.
bool expect(const http::Exchange& ex, http::ResponseHead& head);

// At the body's end: the rendered fields appended to `out`.
void render(const http::Exchange& ex, std::vector<std::pair<std::string, std::string>>& out);

}  // namespace torii::trailers
