// MP4 boxes ("atoms", ISO/IEC 14496-12 section 4.2): big-endian fields and
// the header of one box, read from bytes that may end anywhere. Nothing
// here trusts a size from the file: a header is judged against the bytes
// available and the room left in the box around it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torii::mp4 {

constexpr uint32_t fourcc(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) << 24 | uint32_t(uint8_t(s[1])) << 16 | uint32_t(uint8_t(s[2])) << 8 |
         uint32_t(uint8_t(s[3]));
}

inline uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t get32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}
inline uint64_t get64(const uint8_t* p) { return uint64_t(get32(p)) << 32 | get32(p + 4); }
inline void put16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
inline void put32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}
inline void put64(uint8_t* p, uint64_t v) {
  put32(p, uint32_t(v >> 32));
  put32(p + 4, uint32_t(v));
}

struct BoxHeader {
  uint32_t type = 0;
  uint64_t size = 0;         // the whole box, header included
  uint32_t header_size = 8;  // 8, or 16 with a 64-bit size
  uint64_t data_size() const { return size - header_size; }
};

enum class HeaderStatus {
  ok,
  end,        // a size of 0: nginx stops reading the level there
  too_small,  // a size below the header's own (`header.size` says which)
  too_large,  // the box runs past the box around it (or the file)
  truncated,  // fewer bytes than a header left
};

// Reads the header at `p`, of which `available` bytes can be read, inside
// a parent with `room` bytes left from `p` on. Fills `out` (its size too
// when too_small or too_large, for the log line).
HeaderStatus read_box_header(const uint8_t* p, uint64_t available, uint64_t room, BoxHeader& out);

}  // namespace torii::mp4
