// What became of the client's recent streams. nghttp2 forgets a stream as
// soon as it closes (we announce SETTINGS_NO_RFC7540_PRIORITIES, so it
// keeps no closed streams for a priority tree) and then ignores any frame
// for it. RFC 9113 5.1 answers such a frame by how the stream closed, and
// 5.1.1 a HEADERS for an identifier the client skipped: the session asks
// here before nghttp2 sees a DATA or HEADERS frame for a stream it no
// longer holds.
//
// Bounded: one byte for each of the last kWindow client stream
// identifiers. A frame for an older one is ignored, as nghttp2 would.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace torii::http2 {

class StreamLedger {
 public:
  enum class State : uint8_t {
    unknown,           // older than the window, or not seen yet
    skipped,           // passed over by a higher identifier: closed, never used (RFC 9113 5.1.1)
    open,              // its HEADERS came (nghttp2 may still have ignored it, after GOAWAY)
    client_ended,      // open, and the client has sent END_STREAM
    closed_after_end,  // closed after the client's END_STREAM: more is a connection error
    reset_by_client,   // closed by the client's RST_STREAM: more is a stream error
    reset_by_us,       // closed by our RST_STREAM while the client was sending: frames in flight
  };

  // A HEADERS frame with the odd identifier `id` higher than last(): the
  // stream opens, and the identifiers between are skipped.
  void opened(int32_t id);
  int32_t last() const { return last_; }
  State state(int32_t id) const;
  void client_ended(int32_t id);
  void client_reset(int32_t id);
  // nghttp2 closed the stream: it ends in one of the closed states.
  void closed(int32_t id);

 private:
  static constexpr size_t kWindow = 256;
  bool in_window(int32_t id) const {
    return id > 0 && (id & 1) && id <= last_ && size_t(last_ - id) / 2 < kWindow;
  }
  State& slot(int32_t id) { return states_[(uint32_t(id) >> 1) % kWindow]; }

  std::array<State, kWindow> states_{};
  int32_t last_ = 0;
};

}  // namespace torii::http2
