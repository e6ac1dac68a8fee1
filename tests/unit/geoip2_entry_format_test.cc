// How a geoip2 variable prints each MaxMind DB data type: the module's
// forms, which configs compare against (map values, headers).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/fixed_point.h"
#include "modules/geoip2/entry_format.h"

namespace torii::geoip2 {
namespace {

MMDB_entry_data_s entry_of(uint32_t type) {
  MMDB_entry_data_s e{};
  e.has_data = true;
  e.type = type;
  return e;
}

std::string printed(const MMDB_entry_data_s& e) {
  std::string out;
  EXPECT_TRUE(append_entry(e, out));
  return out;
}

TEST(Geoip2EntryFormat, StringsAndBytesAsTheyAre) {
  auto e = entry_of(MMDB_DATA_TYPE_UTF8_STRING);
  e.utf8_string = "Deutschland!";
  e.data_size = 11;  // not null-terminated in the file: the size counts
  EXPECT_EQ(printed(e), "Deutschland");
  auto b = entry_of(MMDB_DATA_TYPE_BYTES);
  static const uint8_t kBytes[] = {'a', 0, 'b'};
  b.bytes = kBytes;
  b.data_size = 3;
  EXPECT_EQ(printed(b), std::string("a\0b", 3));
}

TEST(Geoip2EntryFormat, IntegersInDecimal) {
  auto e = entry_of(MMDB_DATA_TYPE_UINT16);
  e.uint16 = 65535;
  EXPECT_EQ(printed(e), "65535");
  e = entry_of(MMDB_DATA_TYPE_UINT32);
  e.uint32 = 4294967295u;
  EXPECT_EQ(printed(e), "4294967295");
  e = entry_of(MMDB_DATA_TYPE_INT32);
  e.int32 = -42;
  EXPECT_EQ(printed(e), "-42");
  e = entry_of(MMDB_DATA_TYPE_UINT64);
  e.uint64 = 18446744073709551615ull;
  EXPECT_EQ(printed(e), "18446744073709551615");
}

TEST(Geoip2EntryFormat, BooleanAsDigit) {
  auto e = entry_of(MMDB_DATA_TYPE_BOOLEAN);
  e.boolean = true;
  EXPECT_EQ(printed(e), "1");
  e.boolean = false;
  EXPECT_EQ(printed(e), "0");
}

TEST(Geoip2EntryFormat, FloatsWithFiveDecimals) {
  auto e = entry_of(MMDB_DATA_TYPE_DOUBLE);
  e.double_value = 52.5167;
  EXPECT_EQ(printed(e), "52.51670");
  e.double_value = -0.000001;  // rounds to zero, keeps its sign
  EXPECT_EQ(printed(e), "-0.00000");
  e.double_value = 9.999996;  // the fraction carries into the whole part
  EXPECT_EQ(printed(e), "10.00000");
  auto f = entry_of(MMDB_DATA_TYPE_FLOAT);
  f.float_value = 1.5f;
  EXPECT_EQ(printed(f), "1.50000");
}

TEST(Geoip2EntryFormat, Uint128AsHex) {
  auto e = entry_of(MMDB_DATA_TYPE_UINT128);
#if MMDB_UINT128_IS_BYTE_ARRAY
  std::memset(e.uint128, 0, sizeof e.uint128);
  e.uint128[15] = 0xab;
  e.uint128[0] = 0x01;
#else
  e.uint128 = (static_cast<mmdb_uint128_t>(1) << 120) | 0xab;
#endif
  EXPECT_EQ(printed(e), "0x010000000000000000000000000000ab");
}

TEST(Geoip2EntryFormat, MapsArraysAndNoDataAreNotFound) {
  std::string out;
  EXPECT_FALSE(append_entry(entry_of(MMDB_DATA_TYPE_MAP), out));
  EXPECT_FALSE(append_entry(entry_of(MMDB_DATA_TYPE_ARRAY), out));
  auto none = entry_of(MMDB_DATA_TYPE_UTF8_STRING);
  none.has_data = false;
  EXPECT_FALSE(append_entry(none, out));
  EXPECT_EQ(out, "");
}

TEST(FixedPoint, HugeAndOddValuesDoNotOverflow) {
  std::string out;
  append_fixed(1e300, 2, out);
  EXPECT_EQ(out.substr(0, 3), "100");
  EXPECT_EQ(out.substr(out.size() - 3), ".00");
  out.clear();
  append_fixed(3.25, 0, out);
  EXPECT_EQ(out, "3");
}

}  // namespace
}  // namespace torii::geoip2
