#include "modules/limit_conn/limit_conn.h"

#include <string_view>

#include "http/exchange.h"
#include "http/log_context.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/limit_conn/conn_table.h"

namespace torii::limits {

namespace {

using access::Gate;

enum Status : uint8_t { kPassed = 1, kRejected, kRejectedDryRun };
constexpr std::string_view kStatusNames[] = {"PASSED", "REJECTED", "REJECTED_DRY_RUN"};

// One count held for the request's life.
struct ConnHold : http::RequestCleanup {
  ConnHold(std::shared_ptr<ConnTable> t, ConnTable::Hold h) : table(std::move(t)), hold(h) {}
  ~ConnHold() override { table->remove(hold); }
  std::shared_ptr<ConnTable> table;
  ConnTable::Hold hold;
};

}  // namespace

Gate run_limit_conn(http::Exchange& ex) {
  if (ex.access.limit_conn_status) return Gate::proceed;  // once per request
  const config::LimitsSettings& ls = ex.settings().limits;
  thread_local std::string key;
  // The counts this request took; given back at once if a later limit refuses.
  std::unique_ptr<http::RequestCleanup> taken;
  for (const config::LimitConnRule& rule : ls.conn) {
    const config::LimitZone& zone = *rule.zone;
    key.clear();
    http::render(zone.key, ex, key);
    if (key.empty()) continue;
    if (key.size() > 255) {
      TORII_LOG_EX(ex, error, "the value of the \"%s\" key is more than 255 bytes: \"%s\"%s", zone.key.source.c_str(),
                key.c_str(), http::log_context(ex).c_str());
      continue;
    }
    ex.access.limit_conn_status = kPassed;
    ConnTable::Hold hold;
    auto outcome = zone.conn_table->add(key, rule.conn, hold);
    if (outcome == ConnTable::Outcome::counted) {
      auto c = std::make_unique<ConnHold>(zone.conn_table, hold);
      c->next = std::move(taken);
      taken = std::move(c);
      continue;
    }
    if (outcome == ConnTable::Outcome::over) {
      // The request's own error_log, at limit_conn_log_level.
      const config::ErrorLogConfig* own = http::request_error_log(ex);
      if (log::enabled_for(own, ls.conn_log_level))
        log::write_for(own, ls.conn_log_level, "limiting connections%s by zone \"%s\"%s",
                       ls.conn_dry_run ? ", dry run," : "", zone.name.c_str(), http::log_context(ex).c_str());
    } else {
      TORII_LOG(alert, "could not allocate node in limit_conn zone \"%s\"", zone.name.c_str());
    }
    taken.reset();
    if (ls.conn_dry_run) {
      ex.access.limit_conn_status = kRejectedDryRun;
      return Gate::proceed;
    }
    ex.access.limit_conn_status = kRejected;
    http::send_error(ex, ls.conn_status);
    return Gate::responded;
  }
  while (taken) {
    auto next = std::move(taken->next);
    ex.access.add_cleanup(std::move(taken));
    taken = std::move(next);
  }
  return Gate::proceed;
}

bool append_limit_conn_status(const http::Exchange& ex, std::string& out) {
  uint8_t s = ex.access.limit_conn_status;
  if (s == 0 || s > std::size(kStatusNames)) return false;
  out.append(kStatusNames[s - 1]);
  return true;
}

}  // namespace torii::limits
