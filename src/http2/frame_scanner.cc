#include "http2/frame_scanner.h"

#include <algorithm>

namespace torii::http2 {

bool FrameScanner::next(const char* p, size_t n, size_t& used, FrameHeader& header) {
  size_t at = 0;
  const size_t skip_preface = std::min(preface_left_, n);
  preface_left_ -= skip_preface;
  at += skip_preface;
  while (at < n) {
    if (payload_left_ > 0) {
      const size_t k = std::min(payload_left_, n - at);
      payload_left_ -= k;
      at += k;
      continue;
    }
    const size_t k = std::min(kHeaderSize - have_, n - at);
    std::copy(p + at, p + at + k, partial_ + have_);
    have_ += k;
    at += k;
    if (have_ < kHeaderSize) break;
    have_ = 0;
    header.length = uint32_t(partial_[0]) << 16 | uint32_t(partial_[1]) << 8 | partial_[2];
    header.type = partial_[3];
    header.flags = partial_[4];
    header.stream_id = int32_t((uint32_t(partial_[5] & 0x7f) << 24) | uint32_t(partial_[6]) << 16 |
                               uint32_t(partial_[7]) << 8 | partial_[8]);
    payload_left_ = header.length;
    used = at;
    return true;
  }
  used = n;
  return false;
}

}  // namespace torii::http2
