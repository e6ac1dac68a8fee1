// The content handlers for applications behind a gateway protocol:
// fastcgi_pass and uwsgi_pass. try_files runs first, as in nginx (the
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

}  // namespace torii::handlers
