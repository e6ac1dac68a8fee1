#include "modules/ssi/date.h"

#include <time.h>

namespace torii::ssi {

std::string format_date(bool gmt, const std::string& timefmt) {
  const time_t now = time(nullptr);
  if (timefmt == "%s") return std::to_string(int64_t(now));
  struct tm tm {};
  if (gmt) {
    gmtime_r(&now, &tm);
  } else {
    localtime_r(&now, &tm);
  }
  char buf[2048];
  const size_t n = strftime(buf, sizeof buf, timefmt.c_str(), &tm);
  return std::string(buf, n);
}

}  // namespace torii::ssi
