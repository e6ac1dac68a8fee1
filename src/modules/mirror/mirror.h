// ngx_http_mirror_module's precontent step: for a client's request whose
// location has `mirror`, one background request per URI (Mirrors), whose
// responses are ignored. With mirror_request_body on (the default) and a
// request body, the body is read whole first, as nginx does, and both the
// mirrors and the request's own content handler then read that copy.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::mirror {

enum class Gate { proceed, wait };

// proceed: go on to the content handler (the mirrors, if any, started).
// wait: the body is being read; the request goes on with
// http::resume_request(ex, Phase::mirrored), or was answered (413, 500).
Gate run(http::Exchange& ex);

}  // namespace torii::mirror
