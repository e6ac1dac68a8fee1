#include "http3/quic_counters.h"

#include <atomic>

namespace torii::http3 {

namespace {

std::array<std::atomic<uint64_t>, size_t(QuicEvent::count_)> g_events{};

}  // namespace

void count(QuicEvent e) { g_events[size_t(e)].fetch_add(1, std::memory_order_relaxed); }

uint64_t total(QuicEvent e) { return g_events[size_t(e)].load(std::memory_order_relaxed); }

}  // namespace torii::http3
