// A hashed timer wheel: arm, re-arm and cancel are O(1), which matters
// because every read and write of a connection pushes its deadline out.
// Timers live inside their owners (intrusive), so no allocation per arm.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace torii::core {

class TimerWheel;

class Timer {
 public:
  using Callback = void (*)(void* owner);
  Timer(Callback cb, void* owner) : cb_(cb), owner_(owner) {}
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  bool armed() const { return wheel_ != nullptr; }
  int64_t deadline() const { return deadline_; }

 private:
  friend class TimerWheel;
  Callback cb_;
  void* owner_;
  TimerWheel* wheel_ = nullptr;
  int64_t deadline_ = 0;
  Timer* prev_ = nullptr;
  Timer* next_ = nullptr;
  uint32_t slot_ = 0;
};

class TimerWheel {
 public:
  static constexpr int64_t kTickMs = 8;
  static constexpr uint32_t kSlots = 4096;  // one lap: ~33 s; longer timers wait laps

  explicit TimerWheel(int64_t now_ms);
  ~TimerWheel();

  // (Re-)arms `t` to fire at now + delay_ms.
  void arm(Timer& t, int64_t now_ms, int64_t delay_ms);
  void cancel(Timer& t);

  // Fires every timer whose deadline is <= now. Callbacks may arm or
  // cancel any timer, including the one firing.
  void advance(int64_t now_ms);

  // Milliseconds until the next slot that holds a timer (a bound for
  // epoll_wait), or -1 if there are none.
  int next_wait_ms(int64_t now_ms) const;

  size_t size() const { return count_; }

 private:
  void unlink(Timer& t);
  uint32_t slot_for(int64_t deadline) const { return uint32_t(deadline / kTickMs) % kSlots; }

  std::array<Timer*, kSlots> slots_{};
  std::array<uint64_t, kSlots / 64> occupied_{};  // bitmap of non-empty slots
  int64_t processed_tick_;  // every tick <= this has been fired
  size_t count_ = 0;
};

}  // namespace torii::core
