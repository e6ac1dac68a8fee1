// WebDAV (nginx's ngx_http_dav_module): PUT, DELETE, MKCOL, COPY and MOVE
// on the files under root/alias, for the methods `dav_methods` names.
// Every other method goes on to the static handler, as in nginx.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::dav {

// True when this location's dav_methods include the request's method.
bool handles(const http::Exchange& ex);

// Answers the request (PUT reads its body first and answers later).
void serve(http::Exchange& ex);

}  // namespace torii::dav
