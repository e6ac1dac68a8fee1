#include "modules/limit_req/limit_req.h"

#include <string_view>

#include "core/clock.h"
#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/limit_req/leaky_bucket.h"
#include "modules/limit_req/req_table.h"

namespace torii::limits {

namespace {

using access::Gate;
using config::LogLevel;

enum Status : uint8_t { kPassed = 1, kDelayed, kRejected, kDelayedDryRun, kRejectedDryRun };
constexpr std::string_view kStatusNames[] = {"PASSED", "DELAYED", "REJECTED", "DELAYED_DRY_RUN", "REJECTED_DRY_RUN"};

// nginx logs delays one level below refusals (info stays info).
LogLevel delay_level(LogLevel l) {
  return l == LogLevel::info ? l : static_cast<LogLevel>(static_cast<int>(l) - 1);
}

// The request waits here, in the exchange's handler state, so a client
// that goes away cancels the timer with the exchange.
struct DelayState : http::Exchange::HandlerState {
  explicit DelayState(http::Exchange& e) : ex(e) {}
  static void fire(void* p) {
    http::Exchange& ex = static_cast<DelayState*>(p)->ex;
    // The request moves on and may give its handler state to the proxy:
    // this one lives to the end of the turn, not freed inside its timer.
    std::shared_ptr<http::Exchange::HandlerState> self = std::move(ex.handler_state);
    ex.services().loop->defer([self] {});
    http::resume_request(ex, http::Phase::limit_conn);
  }
  http::Exchange& ex;
  core::Timer timer{&DelayState::fire, this};
};

struct Held {
  ReqTable* table;
  ReqTable::Hold hold;
  const config::LimitReqRule* rule;
};

}  // namespace

int64_t loop_now_ms(http::Exchange& ex) {
  return ex.services().loop ? ex.services().loop->now_ms() : core::monotonic_ms();
}

Gate run_limit_req(http::Exchange& ex) {
  if (ex.access.limit_req_status) return Gate::proceed;  // once per request, as nginx's r->main
  const config::LimitsSettings& ls = ex.settings().limits;
  const auto& rules = ls.req;
  const int64_t now = loop_now_ms(ex);
  thread_local std::string key;
  // Limits before the last hold their entries until the last decides.
  Held held[8];
  size_t nheld = 0;
  bool any = false;
  ReqTable::Lookup result;
  const config::LimitReqRule* limit = nullptr;
  for (size_t n = 0; n < rules.size(); ++n) {
    const config::LimitReqRule& rule = rules[n];
    const config::LimitZone& zone = *rule.zone;
    key.clear();
    http::render(zone.key, ex, key);
    if (key.empty()) continue;
    if (key.size() > 65535) {
      TORII_LOG_EX(ex, error, "the value of the \"%s\" key is more than 65535 bytes: \"%s\"%s", zone.key.source.c_str(),
                key.c_str(), http::log_context(ex).c_str());
      continue;
    }
    // A location has few limits; past eight, the rest are accounted at once.
    bool last = n + 1 == rules.size() || nheld == std::size(held);
    result = zone.req_table->lookup(key, zone.rate, rule.burst, last, now);
    any = true;
    limit = &rule;
    if (result.outcome == ReqTable::Outcome::held) {
      held[nheld++] = {zone.req_table.get(), result.hold, &rule};
      continue;
    }
    break;
  }
  if (!any) return Gate::proceed;

  if (result.outcome == ReqTable::Outcome::busy || result.outcome == ReqTable::Outcome::no_memory) {
    const std::string& zone = limit->zone->name;
    if (result.outcome == ReqTable::Outcome::busy) {
      // The request's own error_log, at limit_req_log_level.
      const config::ErrorLogConfig* own = http::request_error_log(ex);
      if (log::enabled_for(own, ls.req_log_level))
        log::write_for(own, ls.req_log_level, "limiting requests%s, excess: %llu.%03llu by zone \"%s\"%s",
                       ls.req_dry_run ? ", dry run" : "", (unsigned long long)(result.excess / 1000),
                       (unsigned long long)(result.excess % 1000), zone.c_str(), http::log_context(ex).c_str());
    } else {
      TORII_LOG(alert, "could not allocate node in limit_req zone \"%s\"", zone.c_str());
    }
    for (size_t i = 0; i < nheld; ++i) held[i].table->release(held[i].hold);
    if (ls.req_dry_run) {
      ex.access.limit_req_status = kRejectedDryRun;
      return Gate::proceed;
    }
    ex.access.limit_req_status = kRejected;
    http::send_error(ex, ls.req_status);
    return Gate::responded;
  }

  // Passed (or every later key was empty: the held entries decide). The
  // longest wait among the limits is the request's.
  uint64_t excess = result.outcome == ReqTable::Outcome::held ? 0 : result.excess;
  uint64_t delay = delay_ms(excess, limit->delay, limit->zone->rate);
  while (nheld--) {
    const Held& h = held[nheld];
    uint64_t e = h.table->account(h.hold, h.rule->zone->rate, now);
    uint64_t d = delay_ms(e, h.rule->delay, h.rule->zone->rate);
    if (d > delay) {
      delay = d;
      excess = e;
      limit = h.rule;
    }
  }
  if (!delay) {
    ex.access.limit_req_status = kPassed;
    return Gate::proceed;
  }
  LogLevel level = delay_level(ls.req_log_level);
  if (log::enabled(level))
    log::write(level, "delaying request%s, excess: %llu.%03llu, by zone \"%s\"%s", ls.req_dry_run ? ", dry run" : "",
               (unsigned long long)(excess / 1000), (unsigned long long)(excess % 1000), limit->zone->name.c_str(),
               http::log_context(ex).c_str());
  if (ls.req_dry_run) {
    ex.access.limit_req_status = kDelayedDryRun;
    return Gate::proceed;
  }
  ex.access.limit_req_status = kDelayed;
  core::EventLoop* loop = ex.services().loop;
  if (!loop) return Gate::proceed;  // no loop to wait on (unit tests): go on at once
  if (ex.handler_state) {
    // A handler that ran before an internal redirect: freed at the turn's end.
    std::shared_ptr<http::Exchange::HandlerState> old = std::move(ex.handler_state);
    loop->defer([old] {});
  }
  auto state = std::make_unique<DelayState>(ex);
  loop->arm(state->timer, static_cast<int64_t>(delay));
  ex.handler_state = std::move(state);
  return Gate::wait;
}

bool append_limit_req_status(const http::Exchange& ex, std::string& out) {
  uint8_t s = ex.access.limit_req_status;
  if (s == 0 || s > std::size(kStatusNames)) return false;
  out.append(kStatusNames[s - 1]);
  return true;
}

}  // namespace torii::limits
