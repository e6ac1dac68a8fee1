// proxy_upload_rate / proxy_download_rate: one direction of a session reads
// at most `rate` bytes a second, counted as nginx counts it: the allowance
// is rate * (whole seconds since the proxying began + 1) minus what was
// read, so the first second's worth passes at once; after each read the
// direction rests n * 1000 / rate ms. Pure arithmetic: the session owns the
// timer that ends a rest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torii::stream {

class RateLimit {
 public:
  // rate 0: no limit.
  void start(uint64_t rate, int64_t now_ms) {
    rate_ = rate;
    start_sec_ = now_ms / 1000;
  }
  bool limited() const { return rate_ != 0; }

  // How many bytes may be read now (at most `room`); 0 when the direction
  // must rest first, for `delay_ms`.
  size_t allowance(uint64_t received, int64_t now_ms, size_t room, int64_t& delay_ms) const;
  // The rest after reading `n` bytes (0: none).
  int64_t rest_after(size_t n) const { return rate_ ? int64_t(uint64_t(n) * 1000 / rate_) : 0; }

 private:
  uint64_t rate_ = 0;
  int64_t start_sec_ = 0;
};

}  // namespace torii::stream
