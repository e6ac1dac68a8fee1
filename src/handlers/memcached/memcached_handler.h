// The content handler of a location with memcached_pass: GET and HEAD
// only (else 405), $memcached_key rendered (empty: 500 with nginx's log
// line), then the upstream session (proxy.cc) with the memcached codec.
#pragma once

#include "handlers/static_file.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers {

HandlerResult serve_memcached(http::Exchange& ex);

}  // namespace torii::handlers
