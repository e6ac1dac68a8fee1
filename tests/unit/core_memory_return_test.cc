// When a worker returns freed memory: only after its connections fell well
// below their high point and stayed there for two ticks; never while steady.
#include <gtest/gtest.h>

#include "core/memory_return.h"

namespace torii::core {
namespace {

TEST(MemoryReturn, TrimsTwoTicksAfterACrowdLeftThenStartsAgainFromThere) {
  MemoryReturn m;
  for (size_t live = 0; live <= 2000; live += 100) m.note(live);
  EXPECT_FALSE(m.due(2000));
  EXPECT_FALSE(m.due(10));  // first quiet tick
  EXPECT_TRUE(m.due(10));   // second: trim
  EXPECT_FALSE(m.due(10));  // the high point is now 10
  EXPECT_FALSE(m.due(10));
}

TEST(MemoryReturn, ASteadyOrBarelyFallingWorkerNeverTrims) {
  MemoryReturn m;
  for (int tick = 0; tick < 10; ++tick) EXPECT_FALSE(m.due(5000));
  for (int tick = 0; tick < 10; ++tick) EXPECT_FALSE(m.due(3000));  // more than half still open
  MemoryReturn few;
  few.note(100);
  for (int tick = 0; tick < 10; ++tick) EXPECT_FALSE(few.due(40));  // fewer than 64 gone
}

TEST(MemoryReturn, ACrowdThatComesBackBeforeTheSecondTickIsNotTrimmedFor) {
  MemoryReturn m;
  m.note(1000);
  EXPECT_FALSE(m.due(100));
  EXPECT_FALSE(m.due(900));
  EXPECT_FALSE(m.due(100));
  EXPECT_TRUE(m.due(100));
}

TEST(MemoryReturn, TrimsTwoTicksAfterManyOpenConnectionsGaveTheirBuffersBack) {
  MemoryReturn m;
  m.note(1000);
  EXPECT_FALSE(m.due(1000, 300));  // a crowd going quiet, still releasing
  EXPECT_FALSE(m.due(1000, 300));
  EXPECT_FALSE(m.due(1000, 0));  // all quiet: first tick
  EXPECT_TRUE(m.due(1000, 0));   // second: trim, with every connection still open
  EXPECT_FALSE(m.due(1000, 0));
  EXPECT_FALSE(m.due(1000, 0));
}

TEST(MemoryReturn, SteadyReleasesOrAFewNeverTrim) {
  MemoryReturn busy;  // connections going quiet and busy again all the time
  for (int tick = 0; tick < 10; ++tick) EXPECT_FALSE(busy.due(5000, 800 + size_t(tick % 2) * 100));
  MemoryReturn few;
  few.due(100, 40);
  for (int tick = 0; tick < 10; ++tick) EXPECT_FALSE(few.due(100, 0));  // fewer than 64 released at most
}

}  // namespace
}  // namespace torii::core
