// The `api` location's handler: the admin API (NGINX Plus's REST API,
// version 9, for http upstreams). Reads GET/HEAD; with write=on also POST,
// PATCH and DELETE of an upstream's servers. With admin_token_file every
// request must carry "Authorization: Bearer TOKEN".
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::admin_api {

void serve_api(http::Exchange& ex);

}  // namespace torii::admin_api
