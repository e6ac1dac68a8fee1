#include "core/timer_wheel.h"

#include <gtest/gtest.h>

#include <vector>

namespace torii::core {
namespace {

struct Probe {
  int fired = 0;
  static void cb(void* self) { ++static_cast<Probe*>(self)->fired; }
};

TEST(TimerWheel, FiresOnlyWhenDue) {
  TimerWheel w(1000);
  Probe p;
  Timer t(&Probe::cb, &p);
  w.arm(t, 1000, 100);
  w.advance(1050);
  EXPECT_EQ(p.fired, 0);
  w.advance(1099);
  EXPECT_EQ(p.fired, 0);
  // Due at 1100; the wheel may be up to one tick late, never early.
  w.advance(1100 + TimerWheel::kTickMs);
  EXPECT_EQ(p.fired, 1);
  EXPECT_FALSE(t.armed());
  w.advance(5000);
  EXPECT_EQ(p.fired, 1);
}

TEST(TimerWheel, RearmPushesDeadlineOut) {
  TimerWheel w(0);
  Probe p;
  Timer t(&Probe::cb, &p);
  w.arm(t, 0, 100);
  w.arm(t, 50, 100);
  w.advance(120);
  EXPECT_EQ(p.fired, 0);
  w.advance(150 + TimerWheel::kTickMs);
  EXPECT_EQ(p.fired, 1);
  EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheel, CancelAndDestructorUnlink) {
  TimerWheel w(0);
  Probe p;
  Timer a(&Probe::cb, &p);
  w.arm(a, 0, 10);
  w.cancel(a);
  {
    Timer b(&Probe::cb, &p);
    w.arm(b, 0, 10);
    EXPECT_EQ(w.size(), 1u);
  }
  EXPECT_EQ(w.size(), 0u);
  w.advance(100);
  EXPECT_EQ(p.fired, 0);
}

TEST(TimerWheel, LongTimersWaitWholeLaps) {
  TimerWheel w(0);
  Probe p;
  Timer t(&Probe::cb, &p);
  const int64_t lap = TimerWheel::kTickMs * TimerWheel::kSlots;
  w.arm(t, 0, lap * 2 + 40);
  for (int64_t now = 0; now < lap * 2 + 40; now += 500) w.advance(now);
  EXPECT_EQ(p.fired, 0);
  w.advance(lap * 2 + 40 + TimerWheel::kTickMs);
  EXPECT_EQ(p.fired, 1);
}

TEST(TimerWheel, NextWaitBoundsTheSleep) {
  TimerWheel w(0);
  EXPECT_EQ(w.next_wait_ms(0), -1);
  Probe p;
  Timer t(&Probe::cb, &p);
  w.arm(t, 0, 1000);
  int wait = w.next_wait_ms(0);
  EXPECT_GT(wait, 900);
  EXPECT_LE(wait, 1000 + TimerWheel::kTickMs);
}

// A callback may re-arm its own timer; it must not fire twice in one advance.
TEST(TimerWheel, CallbackRearmsItself) {
  struct Self {
    TimerWheel* w;
    Timer* t;
    int fired = 0;
    int64_t now = 0;
    static void cb(void* s) {
      auto* self = static_cast<Self*>(s);
      ++self->fired;
      self->w->arm(*self->t, self->now, 10);
    }
  };
  TimerWheel w(0);
  Self s;
  Timer t(&Self::cb, &s);
  s.w = &w;
  s.t = &t;
  w.arm(t, 0, 10);
  s.now = 16;
  w.advance(16);
  EXPECT_EQ(s.fired, 1);
  s.now = 32;
  w.advance(32);
  EXPECT_EQ(s.fired, 2);
}

}  // namespace
}  // namespace torii::core
