#include "modules/geo/range_table.h"

#include <gtest/gtest.h>

namespace torii::geo {
namespace {

TEST(RangeTable, LaterPaintsWinInsideEarlierOnes) {
  RangeTable t;
  t.paint(0x0a000000, 0x0affffff, 1);  // 10.0.0.0/8
  t.paint(0x0a010000, 0x0a01ffff, 2);  // 10.1.0.0/16
  t.paint(0x0a010100, 0x0a0101ff, 3);  // 10.1.1.0/24
  t.freeze();
  EXPECT_EQ(t.find(0x09ffffff), RangeTable::kNone);
  EXPECT_EQ(t.find(0x0a000000), 1);
  EXPECT_EQ(t.find(0x0a00ffff), 1);
  EXPECT_EQ(t.find(0x0a010000), 2);
  EXPECT_EQ(t.find(0x0a010100), 3);
  EXPECT_EQ(t.find(0x0a0101ff), 3);
  EXPECT_EQ(t.find(0x0a010200), 2);
  EXPECT_EQ(t.find(0x0a020000), 1);
  EXPECT_EQ(t.find(0x0b000000), RangeTable::kNone);
}

TEST(RangeTable, WholeSpaceAndClearing) {
  RangeTable t;
  t.paint(0, ~Key(0), 7);
  t.paint(100, 200, RangeTable::kNone);
  t.paint(150, 150, 8);
  t.freeze();
  EXPECT_EQ(t.find(0), 7);
  EXPECT_EQ(t.find(99), 7);
  EXPECT_EQ(t.find(100), RangeTable::kNone);
  EXPECT_EQ(t.find(150), 8);
  EXPECT_EQ(t.find(151), RangeTable::kNone);
  EXPECT_EQ(t.find(201), 7);
  EXPECT_EQ(t.find(~Key(0)), 7);
}

TEST(RangeTable, EqualNeighboursMerge) {
  RangeTable t;
  t.paint(0, 9, 1);
  t.paint(10, 19, 1);
  t.paint(20, 29, 2);
  t.freeze();
  EXPECT_EQ(t.ranges(), 3u);  // [0,19]=1, [20,29]=2, [30,max]=none
}

}  // namespace
}  // namespace torii::geo
