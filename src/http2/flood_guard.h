// Per-connection counters for the HTTP/2 abuse patterns that cost the
// server work while costing the client almost nothing: streams opened and
// reset at once (CVE-2023-44487, "rapid reset"), floods of SETTINGS, PING
// and PRIORITY frames (and of frames for closed streams, each answered
// with a RST_STREAM), empty DATA frames, and streams opened past a limit
// the client has acknowledged. Each kind has a budget per
// one-second window; a connection over any budget is told ENHANCE_YOUR_CALM
// and closed. nghttp2's own limits (CONTINUATION count, SETTINGS entries,
// queued ACKs, its RST_STREAM token bucket) stay on underneath.
#pragma once

#include <cstdint>

namespace torii::http2 {

struct FloodLimits {
  uint32_t resets_per_second = 200;     // streams cancelled before their response finished
  uint32_t control_per_second = 500;    // SETTINGS, PING, PRIORITY frames, frames for closed streams
  uint32_t empty_data_per_second = 100; // DATA frames with no payload and no END_STREAM
  // Streams refused past http2_max_concurrent_streams after the client
  // ACKed our SETTINGS. Before that, RFC 9113 5.1.2 lets it open as many
  // as it likes: those refusals are not counted at all.
  uint32_t refused_per_second = 200;
};

class FloodGuard {
 public:
  enum class Kind : uint8_t { reset, control, empty_data, refused };

  explicit FloodGuard(const FloodLimits& limits = {}) : limits_(limits) {}

  // Counts one event at `now_ms`; false once this kind is over its budget.
  bool count(Kind kind, int64_t now_ms);
  // The first budget exceeded, for the log: "rapid reset", ...
  const char* reason() const { return reason_; }

 private:
  FloodLimits limits_;
  int64_t window_start_ = 0;
  uint32_t counts_[4] = {};
  const char* reason_ = "";
};

}  // namespace torii::http2
