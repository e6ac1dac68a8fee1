// The content handlers for applications behind a gateway protocol:
// fastcgi_pass, uwsgi_pass and grpc_pass. try_files runs first, as in nginx (the
// usual `try_files $uri =404;` of a PHP location), then the upstream
// session (proxy.cc) runs with the protocol's codec.
#pragma once

#include "handlers/static_file.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers {

HandlerResult serve_fastcgi(http::Exchange& ex);
HandlerResult serve_uwsgi(http::Exchange& ex);
HandlerResult serve_scgi(http::Exchange& ex);
// grpc_pass: the session with the HTTP/2 codec (no try_files, as nginx's
// grpc module has no content-phase files to try).
HandlerResult serve_grpc(http::Exchange& ex);

}  // namespace torii::handlers
