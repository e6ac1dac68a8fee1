// Finds the frame headers in the client's bytes as they arrive, in pieces
// of any size: the 24-byte connection preface, then frames of a 9-byte
// header and its payload. nghttp2 does the parsing; this only tells the
// session where each frame starts and what it is, so the session can look
// at a frame before nghttp2 acts on it (see StreamLedger).
#pragma once

#include <cstddef>
#include <cstdint>

namespace torii::http2 {

struct FrameHeader {
  uint32_t length = 0;
  uint8_t type = 0;
  uint8_t flags = 0;
  int32_t stream_id = 0;
};

class FrameScanner {
 public:
  // Walks p[0, n). True when a frame header completes inside it: `used`
  // then counts the bytes up to and including the header's last byte, and
  // `header` is filled. False when none does: `used` is n.
  bool next(const char* p, size_t n, size_t& used, FrameHeader& header);

 private:
  static constexpr size_t kHeaderSize = 9;
  size_t preface_left_ = 24;
  size_t payload_left_ = 0;
  uint8_t partial_[kHeaderSize] = {};
  size_t have_ = 0;  // bytes of the next header in partial_
};

}  // namespace torii::http2
