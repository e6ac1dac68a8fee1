// limit_req: the preaccess check of every limit_req of the location, as
// nginx's: each key's leaky bucket in its zone; over the burst the request
// is refused (limit_req_status), within it but above `delay` it waits on a
// timer of the worker's loop for the excess to drain, then goes on.
#pragma once

#include <string>

#include "modules/access/access_phase.h"

namespace torii::http {
class Exchange;
}

namespace torii::limits {

access::Gate run_limit_req(http::Exchange& ex);

// $limit_req_status: PASSED, DELAYED, REJECTED, DELAYED_DRY_RUN,
// REJECTED_DRY_RUN; not found before limit_req decided.
bool append_limit_req_status(const http::Exchange& ex, std::string& out);

// The current time of the request's worker loop, in ms (nginx's
// ngx_current_msec): the clock every bucket is measured with.
int64_t loop_now_ms(http::Exchange& ex);

}  // namespace torii::limits
