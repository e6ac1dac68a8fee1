// The connection and request counters stub_status shows. Each worker
// thread writes only its own slot (a plain load and store of a relaxed
// atomic: no lock, no read-modify-write, no shared cache line); the status
// page sums the slots. Totals survive the threads (a slot is never freed).
#pragma once

#include <atomic>
#include <cstdint>

namespace torii::stub_status {

struct Totals {
  int64_t accepted = 0;  // connections accepted
  int64_t handled = 0;   // of those, taken on (not refused at worker_connections)
  int64_t active = 0;    // open client connections
  int64_t requests = 0;  // requests begun
  int64_t reading = 0;   // connections reading a request head
  int64_t writing = 0;   // requests being answered
  int64_t waiting() const { return active - reading - writing; }
};

enum class Counter : uint8_t { accepted, handled, active, requests, reading, writing, count_ };

// Adds `delta` to this thread's slot.
void add(Counter c, int64_t delta);
// Sums every thread's slot.
Totals totals();

// A request head being read on a connection: counts once while set.
class ReadingMark {
 public:
  ReadingMark() = default;
  ~ReadingMark() { clear(); }
  ReadingMark(const ReadingMark&) = delete;
  ReadingMark& operator=(const ReadingMark&) = delete;
  void set() {
    if (!on_) add(Counter::reading, 1);
    on_ = true;
  }
  void clear() {
    if (on_) add(Counter::reading, -1);
    on_ = false;
  }

 private:
  bool on_ = false;
};

}  // namespace torii::stub_status
