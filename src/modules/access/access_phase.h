// nginx's preaccess and access phases for one request: limit_req, then
// limit_conn, then the access checks (allow/deny, auth_basic,
// auth_request) combined as `satisfy all|any` says. A phase may answer
// the request, let it go on, or make it wait (a limit_req delay, an auth
// subrequest); the waiting module resumes it with http::resume_request.
#pragma once

#include <vector>

#include "config/config.h"
#include "http/pipeline.h"

namespace torii::http {
class Exchange;
}

namespace torii::access {

enum class Gate : unsigned char { proceed, responded, wait };

// What allow/deny say: the first rule that matches decides.
enum class RuleVerdict : unsigned char { none, allow, deny };
RuleVerdict check_rules(const std::vector<config::AccessRule>& rules, const http::Exchange& ex);
inline bool rules_allow(const std::vector<config::AccessRule>& rules, const http::Exchange& ex) {
  return check_rules(rules, ex) != RuleVerdict::deny;
}

// Runs the phases from `from` (Phase::start: all of them).
Gate run_access_phases(http::Exchange& ex, http::Phase from);

// The end of the access phase once an auth subrequest answered: `status`
// is its verdict (0: allowed; 401, 403, 500: that response), `prior` the
// code an earlier check of `satisfy any` already refused with (0: none).
void finish_access(http::Exchange& ex, int status, int prior);

// The rest of the access phase once auth_basic's check, done off the loop,
// answered `code` (0 or a status); `refused` as `prior` above.
void continue_after_basic(http::Exchange& ex, int code, int refused);

}  // namespace torii::access
