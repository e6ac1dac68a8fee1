#include <gtest/gtest.h>

#include "modules/compression/accept_encoding.h"

namespace torii::compression {
namespace {

Offer all_three() {
  Offer o;
  o.codings[0] = Coding::zstd;
  o.codings[1] = Coding::br;
  o.codings[2] = Coding::gzip;
  o.count = 3;
  return o;
}

Offer gzip_only() {
  Offer o;
  o.codings[0] = Coding::gzip;
  o.count = 1;
  return o;
}

TEST(AcceptEncoding, QValues) {
  EXPECT_EQ(parse_accept_encoding("gzip").gzip, 1000);
  EXPECT_EQ(parse_accept_encoding("GZip ; Q=0.5").gzip, 500);
  EXPECT_EQ(parse_accept_encoding("gzip;q=0.001").gzip, 1);
  EXPECT_EQ(parse_accept_encoding("gzip;q=0").gzip, 0);
  EXPECT_EQ(parse_accept_encoding("gzip;q=1.000").gzip, 1000);
  // Malformed q-values count as "not acceptable".
  EXPECT_EQ(parse_accept_encoding("gzip;q=1.5").gzip, 0);
  EXPECT_EQ(parse_accept_encoding("gzip;q=0.0001").gzip, 0);
  EXPECT_EQ(parse_accept_encoding("gzip;q=").gzip, 0);
  EXPECT_EQ(parse_accept_encoding("gzip;q=abc").gzip, 0);
  EXPECT_EQ(parse_accept_encoding("deflate").gzip, -1);
  EXPECT_EQ(parse_accept_encoding("xgzip").gzip, -1);
  EXPECT_EQ(parse_accept_encoding("x-gzip").gzip, 1000);
  EXPECT_EQ(parse_accept_encoding(" br , zstd;q=0.9 ,*;q=0.1").any, 100);
}

TEST(AcceptEncoding, StarAppliesToUnlistedCodings) {
  auto ae = parse_accept_encoding("*");
  EXPECT_EQ(ae.quality(Coding::gzip), 1000);
  ae = parse_accept_encoding("gzip;q=0, *");
  EXPECT_EQ(ae.quality(Coding::gzip), 0);
  EXPECT_EQ(ae.quality(Coding::br), 1000);
  EXPECT_EQ(parse_accept_encoding("").quality(Coding::gzip), 0);
}

TEST(AcceptEncoding, ChoiceByClientQThenServerOrder) {
  EXPECT_EQ(choose(parse_accept_encoding("gzip, deflate, br, zstd"), all_three()), Coding::zstd);
  EXPECT_EQ(choose(parse_accept_encoding("gzip, br"), all_three()), Coding::br);
  EXPECT_EQ(choose(parse_accept_encoding("gzip;q=1, br;q=0.5, zstd;q=0.4"), all_three()), Coding::gzip);
  EXPECT_EQ(choose(parse_accept_encoding("br;q=0, gzip"), all_three()), Coding::gzip);
  EXPECT_EQ(choose(parse_accept_encoding("zstd"), gzip_only()), Coding::identity);
  EXPECT_EQ(choose(parse_accept_encoding("identity"), all_three()), Coding::identity);
  EXPECT_EQ(choose(parse_accept_encoding("*;q=0"), all_three()), Coding::identity);
}

}  // namespace
}  // namespace torii::compression
