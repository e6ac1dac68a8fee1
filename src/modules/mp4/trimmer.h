// Cuts an MP4 file to a time range as nginx's mp4 module does: reads the
// top-level boxes (ftyp, moov, mdat) through `read_at`, the moov into
// memory, cuts every track's tables, and gives back the response as the
// bytes to send first (ftyp, the rewritten moov, an mdat header) and the
// range of the file that follows them (the kept part of mdat). A file
// whose moov comes first, asked for from 0 with no end, is sent whole.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace torii::mp4 {

struct CutRequest {
  uint64_t start_ms = 0;   // ?start
  uint64_t length_ms = 0;  // ?end - ?start; 0: to the end
  bool start_key_frame = false;
  uint64_t buffer_size = 512 * 1024;
  uint64_t max_buffer_size = 10 * 1024 * 1024;
};

struct CutResult {
  enum class Kind { cut, whole_file, refused };
  Kind kind = Kind::refused;
  std::string head;          // ftyp + moov + mdat header
  int64_t data_offset = 0;   // then these bytes of the file
  int64_t data_length = 0;
  uint64_t duration_ms = 0;  // of the movie as cut (mvhd), for mp4_limit_rate
  std::string error;         // kind refused: the error log line's text
};

// Reads `n` bytes at `offset` into `out`; false when they cannot be read.
using ReadAt = std::function<bool(int64_t offset, size_t n, uint8_t* out)>;

// The movie's duration in ms from its mvhd (0 when there is none), found
// by reading box headers only: for mp4_limit_rate on a file sent whole.
uint64_t movie_duration_ms(const ReadAt& read_at, int64_t file_size);

CutResult cut_movie(const ReadAt& read_at, int64_t file_size, std::string_view file_name, const CutRequest& req);

}  // namespace torii::mp4
