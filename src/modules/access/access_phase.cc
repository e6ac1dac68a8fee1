#include "modules/access/access_phase.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

#include "http/exchange.h"
#include "http/log_context.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/access/auth_delay.h"
#include "modules/auth_basic/auth_basic.h"
#include "modules/auth_request/auth_request.h"
#include "modules/limit_conn/limit_conn.h"
#include "modules/limit_req/limit_req.h"

namespace torii::access {

namespace {

// The client's address as raw bytes, from $remote_addr, so that whatever
// sets the client's address (real_ip, PROXY protocol) is what the rules see.
int client_bytes(const http::Exchange& ex, uint8_t out[16]) {
  static const config::Variable kRemoteAddr{config::VarId::remote_addr, {}, 0};
  thread_local std::string text;
  text.clear();
  http::append_variable(kRemoteAddr, ex, text);
  if (text.find(':') == std::string::npos) {
    if (inet_pton(AF_INET, text.c_str(), out) == 1) return AF_INET;
    return AF_UNIX;  // "unix:": only `all` matches
  }
  if (inet_pton(AF_INET6, text.c_str(), out) != 1) return AF_UNIX;
  const auto* a6 = reinterpret_cast<const in6_addr*>(out);
  if (IN6_IS_ADDR_V4MAPPED(a6)) {
    memmove(out, out + 12, 4);
    return AF_INET;
  }
  return AF_INET6;
}

void forbidden(http::Exchange& ex) {
  TORII_LOG_EX(ex, error, "access forbidden by rule%s", http::log_context(ex).c_str());
  http::send_error(ex, 403);
}

}  // namespace

RuleVerdict check_rules(const std::vector<config::AccessRule>& rules, const http::Exchange& ex) {
  if (rules.empty()) return RuleVerdict::none;
  uint8_t addr[16] = {};
  int family = client_bytes(ex, addr);
  for (const auto& r : rules) {
    if (!r.all) {
      if (r.family != family) continue;
      size_t n = family == AF_INET ? 4 : 16;
      bool match = true;
      for (size_t i = 0; i < n && match; ++i) match = (addr[i] & r.mask[i]) == (r.addr[i] & r.mask[i]);
      if (!match) continue;
    }
    return r.allow ? RuleVerdict::allow : RuleVerdict::deny;
  }
  return RuleVerdict::none;
}

void finish_access(http::Exchange& ex, int status, int prior) {
  if (status == 0) {
    // satisfy any: one check allowed, an earlier refusal's challenge goes.
    if (prior) ex.response.remove("WWW-Authenticate");
    http::resume_request(ex, http::Phase::content);
    return;
  }
  if (status == 500) {
    http::send_error(ex, 500);
    return;
  }
  int code = status;
  if (ex.settings().limits.satisfy_any && prior == 401) code = 401;  // nginx keeps the first 401
  if (code == 403 && ex.settings().limits.satisfy_any) {
    forbidden(ex);
    return;
  }
  send_refusal(ex, code);  // a 401 after auth_delay
}

// The access checks after auth_basic: its verdict (`code`: 0 allowed, a
// status, -1 not configured), then auth_request, then what `satisfy any`
// collected in `refused`.
Gate after_basic(http::Exchange& ex, int code, int refused) {
  const auto& s = ex.settings();
  const bool any = s.limits.satisfy_any;
  auto refuse = [&](int c) {
    if (refused != 401) refused = c;
  };
  if (code == 0 && any) {
    ex.response.remove("WWW-Authenticate");
    return Gate::proceed;
  }
  if (code > 0) {
    if (!any || (code != 401 && code != 403)) {
      send_refusal(ex, code);  // a 401 after auth_delay
      return Gate::responded;
    }
    refuse(code);
  }

  if (!s.limits.auth_request_uri.empty()) {
    // Waits for the subrequest; it ends the phase with finish_access().
    if (auth::start_auth_request(ex, any ? refused : 0)) return Gate::wait;
    return Gate::responded;
  }

  if (refused) {
    finish_access(ex, refused, 0);
    return Gate::responded;
  }
  return Gate::proceed;
}

Gate run_access_phases(http::Exchange& ex, http::Phase from) {
  using http::Phase;
  const auto& s = ex.settings();
  if (from == Phase::start && !s.limits.req.empty()) {
    Gate g = limits::run_limit_req(ex);
    if (g != Gate::proceed) return g;
  }
  if (from <= Phase::limit_conn && !s.limits.conn.empty()) {
    Gate g = limits::run_limit_conn(ex);
    if (g != Gate::proceed) return g;
  }
  if (from > Phase::access || ex.access.subrequest) return Gate::proceed;

  const bool any = s.limits.satisfy_any;
  int refused = 0;  // satisfy any: the code a check refused with so far
  auto refuse = [&](int code) {
    if (refused != 401) refused = code;
  };

  switch (check_rules(s.access_rules, ex)) {
    case RuleVerdict::allow:
      if (any) return Gate::proceed;
      break;
    case RuleVerdict::deny:
      if (!any) {
        forbidden(ex);
        return Gate::responded;
      }
      refuse(403);
      break;
    case RuleVerdict::none:
      break;
  }

  if (s.limits.auth_basic && !s.limits.auth_basic_user_file.empty()) {
    int code = auth::check_basic(ex, refused);
    // A slow hash is checked off the loop; continue_after_basic() resumes.
    if (code == auth::kBasicPending) return Gate::wait;
    return after_basic(ex, code, refused);
  }
  return after_basic(ex, -1, refused);
}

void continue_after_basic(http::Exchange& ex, int code, int refused) {
  if (after_basic(ex, code, refused) == Gate::proceed) http::resume_request(ex, http::Phase::content);
}

}  // namespace torii::access
