#include "http2/flood_guard.h"

#include <cstddef>

namespace torii::http2 {

namespace {
constexpr int64_t kWindowMs = 1000;
}

bool FloodGuard::count(Kind kind, int64_t now_ms) {
  if (now_ms - window_start_ >= kWindowMs) {
    window_start_ = now_ms;
    for (uint32_t& c : counts_) c = 0;
  }
  const auto i = static_cast<size_t>(kind);
  const uint32_t n = ++counts_[i];
  uint32_t limit = 0;
  const char* why = "";
  switch (kind) {
    case Kind::reset:
      limit = limits_.resets_per_second;
      why = "too many streams reset (rapid reset)";
      break;
    case Kind::control:
      limit = limits_.control_per_second;
      why = "too many SETTINGS, PING, PRIORITY frames or frames for closed streams";
      break;
    case Kind::empty_data:
      limit = limits_.empty_data_per_second;
      why = "too many empty DATA frames";
      break;
    case Kind::refused:
      limit = limits_.refused_per_second;
      why = "too many streams past http2_max_concurrent_streams";
      break;
  }
  if (n <= limit) return true;
  reason_ = why;
  return false;
}

}  // namespace torii::http2
