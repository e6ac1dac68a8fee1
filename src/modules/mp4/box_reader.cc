#include "modules/mp4/box_reader.h"

namespace torii::mp4 {

HeaderStatus read_box_header(const uint8_t* p, uint64_t available, uint64_t room, BoxHeader& out) {
  if (available < 4) return HeaderStatus::truncated;
  out.size = get32(p);
  out.header_size = 8;
  if (out.size == 0) return HeaderStatus::end;
  if (out.size < 8) {
    if (out.size != 1) return HeaderStatus::too_small;
    // A 64-bit size follows the type.
    if (available < 16) return HeaderStatus::truncated;
    out.size = get64(p + 8);
    out.header_size = 16;
    if (out.size < 16) return HeaderStatus::too_small;
  }
  if (available < 8) return HeaderStatus::truncated;
  out.type = get32(p + 4);
  if (out.size > room) return HeaderStatus::too_large;
  return HeaderStatus::ok;
}

}  // namespace torii::mp4
