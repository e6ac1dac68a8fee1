#include "http/range.h"

#include <gtest/gtest.h>

#include <string>

namespace torii::http {
namespace {

using R = std::vector<ByteRange>;

TEST(HttpRange, SingleRanges) {
  R out;
  EXPECT_EQ(parse_range("bytes=0-99", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{0, 100}}));
  EXPECT_EQ(parse_range("bytes=500-", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{500, 1000}}));
  EXPECT_EQ(parse_range("bytes=-100", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{900, 1000}}));
  EXPECT_EQ(parse_range("bytes=-5000", 1000, out), RangeOutcome::ok);  // suffix longer than file
  EXPECT_EQ(out, (R{{0, 1000}}));
  EXPECT_EQ(parse_range("bytes=990-5000", 1000, out), RangeOutcome::ok);  // end clipped
  EXPECT_EQ(out, (R{{990, 1000}}));
  EXPECT_EQ(parse_range("Bytes=0-0", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{0, 1}}));
  EXPECT_EQ(parse_range("bytes= 1-2 ", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{1, 3}}));
}

TEST(HttpRange, ListsKeepOrderWhenDisjoint) {
  R out;
  EXPECT_EQ(parse_range("bytes=500-599, 0-99,,900-", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{500, 600}, {0, 100}, {900, 1000}}));
}

TEST(HttpRange, OverlapsAndNeighboursAreCoalesced) {
  R out;
  EXPECT_EQ(parse_range("bytes=50-150,0-99,200-299,300-310", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{0, 151}, {200, 311}}));
  EXPECT_EQ(parse_range("bytes=0-499,-600", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{0, 1000}}));
}

TEST(HttpRange, UnsatisfiableRangesAreDropped) {
  R out;
  EXPECT_EQ(parse_range("bytes=2000-3000,10-19", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{10, 20}}));
  EXPECT_EQ(parse_range("bytes=1000-", 1000, out), RangeOutcome::unsatisfiable);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(parse_range("bytes=-0", 1000, out), RangeOutcome::unsatisfiable);
  EXPECT_EQ(parse_range("bytes=5000-6000,1000-1000", 1000, out), RangeOutcome::unsatisfiable);
}

TEST(HttpRange, BadSyntaxIsIgnored) {
  R out;
  for (const char* bad : {"", "bytes", "bytes=", "items=0-1", "bytes=a-b", "bytes=5-1", "bytes=1-2-3",
                          "bytes=--1", "bytes=1", "bytes=0-1;x", "bytes=99999999999999999999-",
                          "bytes=0-1 2", "bytes 0-1"}) {
    EXPECT_EQ(parse_range(bad, 1000, out), RangeOutcome::ignore) << bad;
    EXPECT_TRUE(out.empty()) << bad;
  }
}

TEST(HttpRange, EmptyFileIgnoresRange) {
  R out;
  EXPECT_EQ(parse_range("bytes=0-", 0, out), RangeOutcome::ignore);
  EXPECT_EQ(parse_range("bytes=-5", 0, out), RangeOutcome::ignore);
}

TEST(HttpRange, AbusiveRequestsGetTheWholeFile) {
  R out;
  std::string many = "bytes=";
  for (int i = 0; i < 101; ++i) many += std::to_string(i * 2) + "-" + std::to_string(i * 2) + ",";
  EXPECT_EQ(parse_range(many, 1000, out), RangeOutcome::ignore);
  EXPECT_EQ(parse_range(many, 1000, out, 200), RangeOutcome::ok);
  EXPECT_EQ(out.size(), 101u);
  // The same bytes asked for three times.
  EXPECT_EQ(parse_range("bytes=0-,0-,0-", 1000, out), RangeOutcome::ignore);
  EXPECT_EQ(parse_range("bytes=0-,0-", 1000, out), RangeOutcome::ok);
  EXPECT_EQ(out, (R{{0, 1000}}));
  // Huge sizes don't overflow the sum.
  EXPECT_EQ(parse_range("bytes=0-,0-,0-", INT64_MAX, out), RangeOutcome::ignore);
}

}  // namespace
}  // namespace torii::http
