// Settings of nginx's pseudo-streaming modules: `flv` and `mp4` make a
// location's content handler (modules/flv, modules/mp4); the mp4_* values
// inherit http -> server -> location as nginx's merge does.
#pragma once

#include <cstdint>

namespace torii::config {

enum class PseudoStreaming : uint8_t { off, flv, mp4 };

struct Mp4Settings {
  int64_t buffer_size = 512 * 1024;             // mp4_buffer_size: the first read of the file
  int64_t max_buffer_size = 10 * 1024 * 1024;   // mp4_max_buffer_size: the largest moov read
  bool start_key_frame = false;                 // mp4_start_key_frame
  // mp4_limit_rate (NGINX Plus): the body leaves at the file's average
  // bitrate times this factor, in thousandths; 0: off, "on": 1100.
  int64_t limit_rate_permille = 0;
  int64_t limit_rate_after_ms = 60'000;  // mp4_limit_rate_after: playback time sent unpaced
};

}  // namespace torii::config
