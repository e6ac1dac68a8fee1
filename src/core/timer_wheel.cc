#include "core/timer_wheel.h"

#include <algorithm>

namespace torii::core {

Timer::~Timer() {
  if (wheel_) wheel_->cancel(*this);
}

TimerWheel::TimerWheel(int64_t now_ms) : processed_tick_(now_ms / kTickMs) {}

TimerWheel::~TimerWheel() {
  for (auto*& head : slots_) {
    while (head) unlink(*head);
  }
}

void TimerWheel::unlink(Timer& t) {
  if (t.prev_) {
    t.prev_->next_ = t.next_;
  } else {
    slots_[t.slot_] = t.next_;
    if (!t.next_) occupied_[t.slot_ / 64] &= ~(uint64_t(1) << (t.slot_ % 64));
  }
  if (t.next_) t.next_->prev_ = t.prev_;
  t.prev_ = t.next_ = nullptr;
  t.wheel_ = nullptr;
  --count_;
}

void TimerWheel::arm(Timer& t, int64_t now_ms, int64_t delay_ms) {
  if (t.wheel_) unlink(t);
  t.deadline_ = now_ms + std::max<int64_t>(delay_ms, 0);
  // The first tick that starts at or after the deadline, so that the timer
  // is due whenever its slot is processed; never a tick already processed.
  int64_t tick = std::max((t.deadline_ + kTickMs - 1) / kTickMs, processed_tick_ + 1);
  t.slot_ = uint32_t(tick) % kSlots;
  t.next_ = slots_[t.slot_];
  t.prev_ = nullptr;
  if (t.next_) t.next_->prev_ = &t;
  slots_[t.slot_] = &t;
  occupied_[t.slot_ / 64] |= uint64_t(1) << (t.slot_ % 64);
  t.wheel_ = this;
  ++count_;
}

void TimerWheel::cancel(Timer& t) {
  if (t.wheel_ == this) unlink(t);
}

void TimerWheel::advance(int64_t now_ms) {
  const int64_t now_tick = now_ms / kTickMs;
  // After a long stall, one lap covers every slot.
  int64_t from = std::max(processed_tick_ + 1, now_tick - int64_t(kSlots) + 1);
  for (int64_t tick = from; tick <= now_tick; ++tick) {
    uint32_t slot = uint32_t(tick) % kSlots;
    // Take the due timers out first: callbacks may re-arm into this slot.
    Timer* due = nullptr;
    for (Timer* t = slots_[slot]; t;) {
      Timer* next = t->next_;
      if (t->deadline_ <= now_ms) {
        unlink(*t);
        t->next_ = due;
        due = t;
      }
      t = next;
    }
    processed_tick_ = tick;
    while (due) {
      Timer* t = due;
      due = t->next_;
      t->next_ = nullptr;
      t->cb_(t->owner_);
    }
  }
  processed_tick_ = std::max(processed_tick_, now_tick);
}

int TimerWheel::next_wait_ms(int64_t now_ms) const {
  if (count_ == 0) return -1;
  // Walk the bitmap from the next tick; a whole lap is at most 64 words.
  int64_t start = processed_tick_ + 1;
  for (uint32_t i = 0; i < kSlots;) {
    uint32_t slot = uint32_t(start + i) % kSlots;
    uint64_t word = occupied_[slot / 64] >> (slot % 64);
    if (word) {
      i += uint32_t(__builtin_ctzll(word));
      int64_t when = (start + i) * kTickMs;
      return int(std::max<int64_t>(when - now_ms, 0));
    }
    i += 64 - slot % 64;
  }
  return int(kTickMs);
}

}  // namespace torii::core
