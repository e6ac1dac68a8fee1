// What the mp4 module keeps of a file while it cuts it: the moov box read
// into memory (edited in place), and per track the boxes nginx keeps, as
// views into it or into the track's own few bytes, in the order they are
// written out. Everything a later step reads from a table was bounded when
// the table was read (movie_reader.cc).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace torii::mp4 {

// The boxes of a trak that are written out, in their order: nginx's list.
// A trak's other boxes (its edts among them, udta, sgpd...) are dropped.
enum Slot : uint8_t {
  trak, tkhd, edts, elst, mdia, mdhd, hdlr, minf, vmhd, smhd, dinf, stbl, stsd,
  stts, stts_data, stss, stss_data, ctts, ctts_data,
  stsc, stsc_start, stsc_data, stsc_end, stsz, stsz_data, stco, stco_data, co64, co64_data,
  kSlotCount
};

// Bytes to write out; empty (null) when the box is not written.
struct Bytes {
  uint8_t* pos = nullptr;
  uint8_t* last = nullptr;
  bool set() const { return pos != nullptr; }
  size_t size() const { return size_t(last - pos); }
  void clear() { pos = last = nullptr; }
};

inline constexpr size_t kStscEntry = 12;  // first chunk, samples per chunk, description id
inline constexpr size_t kElstBox = 36;    // one version-1 entry

struct Track {
  std::array<Bytes, kSlotCount> out{};
  uint32_t timescale = 0;
  uint32_t time_to_sample_entries = 0;
  uint32_t sample_to_chunk_entries = 0;
  uint32_t sync_samples_entries = 0;
  uint32_t composition_offset_entries = 0;
  uint32_t sample_sizes_entries = 0;
  uint32_t chunks = 0;
  uint64_t start_sample = 0;
  uint64_t end_sample = 0;
  uint64_t start_chunk = 0;
  uint64_t end_chunk = 0;
  uint64_t start_chunk_samples = 0;
  uint64_t end_chunk_samples = 0;
  uint64_t start_chunk_samples_size = 0;
  uint64_t end_chunk_samples_size = 0;
  uint64_t duration = 0;        // mdhd's, in the track's timescale
  uint64_t prefix = 0;          // samples kept before the start for a key frame, in time
  uint64_t movie_duration = 0;  // tkhd's, in the movie's timescale
  int64_t start_offset = 0;     // the track's first and last byte kept in the file
  int64_t end_offset = 0;
  size_t tkhd_size = 0, mdhd_size = 0, hdlr_size = 0, vmhd_size = 0, smhd_size = 0, dinf_size = 0;
  size_t size = 0;  // of the boxes written so far, while the sizes are worked out
  // Boxes and entries the cut makes, written out from here.
  std::array<uint8_t, 8> edts_box{};
  std::array<uint8_t, kElstBox> elst_box{};
  std::array<uint8_t, kStscEntry> stsc_start_entry{};
  std::array<uint8_t, kStscEntry> stsc_end_entry{};
};

// One request's cut: its times, its settings, and the file's facts.
struct Movie {
  std::string_view file_name;  // for the error lines
  uint64_t start = 0;          // ms from the start (?start)
  uint64_t length = 0;         // ms kept (?end - ?start); 0: to the end
  bool start_key_frame = false;
  uint64_t buffer_size = 0;
  uint64_t max_buffer_size = 0;
  int64_t file_size = 0;

  uint32_t timescale = 0;  // mvhd's
  std::vector<uint8_t> ftyp;  // the ftyp box as written out; empty: none
  std::vector<uint8_t> moov;  // the moov box's data, edited in place
  bool have_moov = false;
  Bytes mvhd;
  std::deque<Track> tracks;  // a deque: views into a track stay valid as others are added
  bool have_mdat = false;
  int64_t mdat_data_start = 0;
  int64_t mdat_data_end = 0;

  std::string error;  // the error log line's text, once a step failed

  // Sets `error` to `text` with `"FILE"` in place of each '@'; returns false.
  bool fail(std::string_view text);
};

// Tracks beyond this many are refused ("too many"): each costs memory
// while a moov of a few bytes per trak could name millions.
inline constexpr size_t kMaxTracks = 256;

}  // namespace torii::mp4
