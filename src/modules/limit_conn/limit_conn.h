// limit_conn: the preaccess count of requests in progress per key, as
// nginx's: each limit of the location adds one to its key's count, or
// refuses the request (limit_conn_status) when the key is at its number.
// The counts are given back when the request ends (the exchange goes), so
// an HTTP/2 connection counts each of its streams, as nginx does.
#pragma once

#include <string>

#include "modules/access/access_phase.h"

namespace torii::http {
class Exchange;
}

namespace torii::limits {

access::Gate run_limit_conn(http::Exchange& ex);

// $limit_conn_status: PASSED, REJECTED, REJECTED_DRY_RUN; not found
// before limit_conn decided.
bool append_limit_conn_status(const http::Exchange& ex, std::string& out);

}  // namespace torii::limits
