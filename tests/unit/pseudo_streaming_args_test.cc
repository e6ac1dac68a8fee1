// The query arguments of the flv and mp4 modules, read as nginx reads
// them: ?start as ngx_atoof (flv), ?start/?end as ngx_http_mp4_atofp.
#include <gtest/gtest.h>

#include "modules/flv/flv_handler.h"
#include "modules/mp4/mp4_handler.h"

namespace torii::mp4 {
namespace {

TEST(Mp4Args, SecondsAsMilliseconds) {
  EXPECT_EQ(parse_seconds_ms("2"), 2000);
  EXPECT_EQ(parse_seconds_ms("2.5"), 2500);
  EXPECT_EQ(parse_seconds_ms("0.0509"), 50);
  EXPECT_EQ(parse_seconds_ms(".5"), 500);
  EXPECT_EQ(parse_seconds_ms("5."), 5000);
  EXPECT_EQ(parse_seconds_ms(""), -1);
  EXPECT_EQ(parse_seconds_ms("1.2.3"), -1);
  EXPECT_EQ(parse_seconds_ms("-1"), -1);
  EXPECT_EQ(parse_seconds_ms("1e3"), -1);
  EXPECT_EQ(parse_seconds_ms("99999999999999999999"), -1);
}

TEST(FlvArgs, ByteOffset) {
  EXPECT_EQ(flv::parse_offset("0"), 0);
  EXPECT_EQ(flv::parse_offset("1234"), 1234);
  EXPECT_EQ(flv::parse_offset(""), -1);
  EXPECT_EQ(flv::parse_offset("12a"), -1);
  EXPECT_EQ(flv::parse_offset("-3"), -1);
  EXPECT_EQ(flv::parse_offset("99999999999999999999"), -1);
}

}  // namespace
}  // namespace torii::mp4
