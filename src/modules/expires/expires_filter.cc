#include "modules/expires/expires_filter.h"

#include <ctime>
#include <optional>
#include <string>

#include "config/expires.h"
#include "http/date.h"
#include "http/variables.h"

namespace torii::expires {

namespace {

constexpr int64_t kMaxExpiresSeconds = 315'360'000;  // nginx's "expires max": 10 years
constexpr int64_t kExpiresMaxDate = 2145916555;      // Thu, 31 Dec 2037 23:55:55 GMT

// The next moment the local clock reads this time of day (nginx's
// ngx_next_time): today if it is still ahead, else tomorrow.
int64_t next_daily(int64_t now, int64_t time_of_day) {
  time_t t = time_t(now);
  tm local{};
  localtime_r(&t, &local);
  local.tm_hour = int(time_of_day / 3600);
  local.tm_min = int(time_of_day % 3600 / 60);
  local.tm_sec = int(time_of_day % 60);
  time_t next = mktime(&local);
  if (next != -1 && next - now > 0) return next;
  local.tm_mday++;
  local.tm_isdst = -1;
  next = mktime(&local);
  return next == -1 ? now : next;
}

}  // namespace

void apply(const config::Expires& e, const http::Exchange& ex, int64_t now_sec, http::ResponseHead& head) {
  using Kind = config::Expires::Kind;
  Kind kind = e.kind;
  int64_t seconds = e.seconds;
  if (!e.value.empty()) {
    // A value that renders to nothing nginx understands leaves the
    // response alone, as nginx's does.
    const std::string v = http::render(e.value, ex);
    if (config::parse_expires(v, kind, seconds) != nullptr) return;
  }
  if (kind == Kind::off) return;
  head.remove("Expires");
  head.remove("Cache-Control");
  if (kind == Kind::epoch) {
    head.add("Expires", "Thu, 01 Jan 1970 00:00:01 GMT");
    head.add("Cache-Control", "no-cache");
    return;
  }
  if (kind == Kind::max) {
    head.add("Expires", http::format_http_date(kExpiresMaxDate));
    head.add("Cache-Control", "max-age=" + std::to_string(kMaxExpiresSeconds));
    return;
  }
  if (seconds == 0 && kind != Kind::daily) {
    head.add("Expires", http::format_http_date(now_sec));
    head.add("Cache-Control", "max-age=0");
    return;
  }
  int64_t expires_at = 0;
  int64_t max_age = 0;
  std::optional<int64_t> modified;
  if (kind == Kind::after_modified) {
    if (const std::string* lm = head.find("Last-Modified")) modified = http::parse_http_date(*lm);
  }
  if (kind == Kind::daily) {
    expires_at = next_daily(now_sec, seconds);
    max_age = expires_at - now_sec;
  } else if (modified) {
    expires_at = *modified + seconds;
    max_age = expires_at - now_sec;
  } else {
    // "modified" on a response without Last-Modified counts from now.
    expires_at = now_sec + seconds;
    max_age = seconds;
  }
  head.add("Expires", http::format_http_date(expires_at));
  head.add("Cache-Control", seconds < 0 || max_age < 0 ? std::string("no-cache") : "max-age=" + std::to_string(max_age));
}

}  // namespace torii::expires
