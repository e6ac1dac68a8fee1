// A request body read whole before the content phase, as nginx's
// ngx_http_read_client_request_body when a phase needs all of it: into a
// RequestBodyBuffer (client_body_buffer_size in memory, the rest in a
// temporary file under client_body_temp_path), client_max_body_size judged
// as the bytes come, all from the settings that apply when the read
// starts. Then the exchange's body_source becomes a BodyReplay of it, so
// the content handler reads the stored copy, and `then` runs at the end of
// that loop turn. A body past the limit is a 413 (the connection closes),
// a failed write to the temporary file a 500; `then` does not run.
// Used by mirror_request_body (modules/mirror) and client_body_early_read
// (modules/early_body).
#pragma once

#include <functional>

namespace torii::http {

class Exchange;

void read_whole_body(Exchange& ex, std::function<void(Exchange&)> then);

}  // namespace torii::http
