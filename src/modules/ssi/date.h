// $date_gmt and $date_local: now, formatted by strftime with an SSI
// page's timefmt ("%s": seconds since the epoch). nginx defines them for
// every request, with the default format outside an SSI page.
#pragma once

#include <string>
#include <string_view>

namespace torii::ssi {

inline constexpr std::string_view kDefaultTimefmt = "%A, %d-%b-%Y %H:%M:%S %Z";

std::string format_date(bool gmt, const std::string& timefmt);

}  // namespace torii::ssi
