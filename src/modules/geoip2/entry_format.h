// A value found in a MaxMind DB as the geoip2 modules print it: strings
// and bytes as they are, numbers in decimal, float and double with five
// decimals (nginx's "%.5f"), a boolean as 0 or 1, a uint128 as "0x" and
// 32 hex digits. A map or an array has no printed form (not found).
#pragma once

#include <maxminddb.h>

#include <string>

namespace torii::geoip2 {

// False (nothing appended) when the entry has no value or is a map/array.
bool append_entry(const MMDB_entry_data_s& entry, std::string& out);

}  // namespace torii::geoip2
