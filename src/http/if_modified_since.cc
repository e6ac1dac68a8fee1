#include "http/if_modified_since.h"

#include "http/date.h"

namespace torii::http {

bool not_modified_since(config::CoreSettings::IfModifiedSince mode, std::string_view since, int64_t last_modified) {
  using M = config::CoreSettings::IfModifiedSince;
  if (mode == M::off) return false;
  const auto date = parse_http_date(since);
  if (!date) return false;
  return *date == last_modified || (mode == M::before && *date > last_modified);
}

}  // namespace torii::http
