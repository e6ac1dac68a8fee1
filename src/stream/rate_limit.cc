#include "stream/rate_limit.h"

#include <limits>

namespace torii::stream {

size_t RateLimit::allowance(uint64_t received, int64_t now_ms, size_t room, int64_t& delay_ms) const {
  delay_ms = 0;
  if (!rate_) return room;
  int64_t seconds = now_ms / 1000 - start_sec_ + 1;
  if (seconds < 1) seconds = 1;
  // A rate so high that the product overflows allows anything.
  if (uint64_t(seconds) > std::numeric_limits<uint64_t>::max() / rate_) return room;
  const uint64_t allowed = rate_ * uint64_t(seconds);
  if (allowed <= received) {
    delay_ms = int64_t((received - allowed) * 1000 / rate_) + 1;
    return 0;
  }
  const uint64_t limit = allowed - received;
  return limit < room ? size_t(limit) : room;
}

}  // namespace torii::stream
