// post_action (ngx_http_core_module, undocumented but in old configs, often
// for download accounting): once the client's response has ended (sent
// whole, or cut short by the client), the request goes on at the
// post_action URI or named location with its response thrown away. nginx
// runs it as the client's own request redirected internally; torii runs it
// as the worker's, as a mirror is (modules/mirror/mirrors.h), with the
// client's head, variables, $status and $body_bytes_sent, so nothing it
// does can reach or delay the client's connection.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::post_action {

// Called by the codecs as the client's request is logged.
void after_response(http::Exchange& ex);

}  // namespace torii::post_action
