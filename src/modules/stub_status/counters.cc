#include "modules/stub_status/counters.h"

#include <algorithm>
#include <cstddef>

namespace torii::stub_status {

namespace {

constexpr size_t kCounters = static_cast<size_t>(Counter::count_);
constexpr size_t kSlots = 256;  // threads with a slot of their own; the rest share the last one

struct alignas(64) Slot {
  std::atomic<int64_t> values[kCounters];
};

Slot g_slots[kSlots];
std::atomic<size_t> g_used{0};

struct Mine {
  Slot* slot = nullptr;
  bool shared = false;
};

Mine& mine() {
  thread_local Mine m;
  if (!m.slot) {
    size_t i = g_used.fetch_add(1, std::memory_order_relaxed);
    m.shared = i >= kSlots - 1;
    m.slot = &g_slots[m.shared ? kSlots - 1 : i];
  }
  return m;
}

}  // namespace

void add(Counter c, int64_t delta) {
  Mine& m = mine();
  auto& v = m.slot->values[static_cast<size_t>(c)];
  if (m.shared) {
    v.fetch_add(delta, std::memory_order_relaxed);
  } else {
    v.store(v.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);  // one writer
  }
}

Totals totals() {
  int64_t sum[kCounters] = {};
  size_t used = std::min(g_used.load(std::memory_order_relaxed), kSlots);
  for (size_t s = 0; s < used; ++s)
    for (size_t c = 0; c < kCounters; ++c) sum[c] += g_slots[s].values[c].load(std::memory_order_relaxed);
  Totals t;
  t.accepted = sum[static_cast<size_t>(Counter::accepted)];
  t.handled = sum[static_cast<size_t>(Counter::handled)];
  t.active = sum[static_cast<size_t>(Counter::active)];
  t.requests = sum[static_cast<size_t>(Counter::requests)];
  t.reading = sum[static_cast<size_t>(Counter::reading)];
  t.writing = sum[static_cast<size_t>(Counter::writing)];
  return t;
}

}  // namespace torii::stub_status
