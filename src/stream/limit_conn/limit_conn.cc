#include "stream/limit_conn/limit_conn.h"

#include <string_view>


namespace torii::stream {

namespace {

enum Status : uint8_t { kPassed = 1, kRejected, kRejectedDryRun };
constexpr std::string_view kStatusNames[] = {"PASSED", "REJECTED", "REJECTED_DRY_RUN"};

}  // namespace

bool ConnHolds::take(const Settings& s, Facts& f, const Log& log) {
  std::string key;
  for (const ConnLimit& limit : s.conn_limits) {
    const ConnZone& zone = *limit.zone;
    key.clear();
    render(zone.key, f, key);
    if (key.empty()) continue;
    if (key.size() > 255) {
      log(config::LogLevel::error,
          "the value of the \"" + zone.key.source + "\" key is more than 255 bytes: \"" + key + "\"");
      continue;
    }
    f.limit_conn_status = kPassed;
    limits::ConnTable::Hold hold;
    const auto outcome = zone.table->add(key, limit.conn, hold);
    if (outcome == limits::ConnTable::Outcome::counted) {
      held_.push_back(Held{zone.table, hold});
      continue;
    }
    if (outcome == limits::ConnTable::Outcome::over) {
      log(s.conn_log_level,
          std::string("limiting connections") + (s.conn_dry_run ? ", dry run," : "") + " by zone \"" + zone.name + "\"");
    }
    release();
    if (s.conn_dry_run) {
      f.limit_conn_status = kRejectedDryRun;
      return true;
    }
    f.limit_conn_status = kRejected;
    return false;
  }
  return true;
}

void ConnHolds::release() {
  for (auto& h : held_) h.table->remove(h.hold);
  held_.clear();
}

bool append_limit_conn_status(uint8_t status, std::string& out) {
  if (status == 0 || status > std::size(kStatusNames)) return false;
  out.append(kStatusNames[status - 1]);
  return true;
}

}  // namespace torii::stream
