#include "modules/geoip2/entry_format.h"

#include <cstdint>

#include "core/fixed_point.h"

namespace torii::geoip2 {

namespace {

void append_hex_byte(uint8_t b, std::string& out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out.push_back(kDigits[b >> 4]);
  out.push_back(kDigits[b & 0xf]);
}

void append_uint128(const MMDB_entry_data_s& entry, std::string& out) {
  out.append("0x");
#if MMDB_UINT128_IS_BYTE_ARRAY
  for (uint8_t b : entry.uint128) append_hex_byte(b, out);
#else
  const mmdb_uint128_t v = entry.uint128;
  for (int shift = 120; shift >= 0; shift -= 8) append_hex_byte(static_cast<uint8_t>(v >> shift), out);
#endif
}

}  // namespace

bool append_entry(const MMDB_entry_data_s& entry, std::string& out) {
  if (!entry.has_data) return false;
  switch (entry.type) {
    case MMDB_DATA_TYPE_UTF8_STRING:
      out.append(entry.utf8_string, entry.data_size);
      return true;
    case MMDB_DATA_TYPE_BYTES:
      out.append(reinterpret_cast<const char*>(entry.bytes), entry.data_size);
      return true;
    case MMDB_DATA_TYPE_BOOLEAN:
      out.push_back(entry.boolean ? '1' : '0');
      return true;
    case MMDB_DATA_TYPE_FLOAT:
      append_fixed(entry.float_value, 5, out);
      return true;
    case MMDB_DATA_TYPE_DOUBLE:
      append_fixed(entry.double_value, 5, out);
      return true;
    case MMDB_DATA_TYPE_UINT16:
      out.append(std::to_string(entry.uint16));
      return true;
    case MMDB_DATA_TYPE_UINT32:
      out.append(std::to_string(entry.uint32));
      return true;
    case MMDB_DATA_TYPE_INT32:
      out.append(std::to_string(entry.int32));
      return true;
    case MMDB_DATA_TYPE_UINT64:
      out.append(std::to_string(entry.uint64));
      return true;
    case MMDB_DATA_TYPE_UINT128:
      append_uint128(entry, out);
      return true;
    default:
      return false;
  }
}

}  // namespace torii::geoip2
