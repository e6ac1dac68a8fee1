// libFuzzer target for the mp4 module's cutter (modules/mp4/trimmer): any
// bytes as a file, cut at times taken from the first bytes, with and
// without mp4_start_key_frame. A cut must keep its file range inside the
// file, and its head must be a box sequence whose sizes add up (ftyp,
// moov, then the mdat header that announces exactly the range).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "modules/mp4/box_reader.h"
#include "modules/mp4/trimmer.h"

namespace mp4 = torii::mp4;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  // Byte 0: key frames and the times' scale; bytes 1-4: start and length.
  mp4::CutRequest req;
  req.start_key_frame = data[0] & 1;
  const uint64_t scale = (data[0] & 2) ? 1000 : 37;
  req.start_ms = uint64_t(data[1] << 8 | data[2]) * scale;
  req.length_ms = uint64_t(data[3] << 8 | data[4]) * scale;
  req.buffer_size = 4096;
  req.max_buffer_size = 1 << 20;
  const uint8_t* file = data + 5;
  const size_t file_size = size - 5;
  mp4::ReadAt read = [file, file_size](int64_t off, size_t n, uint8_t* out) {
    if (off < 0 || uint64_t(off) > file_size || n > file_size - uint64_t(off)) return false;
    if (n) std::memcpy(out, file + off, n);
    return true;
  };
  const mp4::CutResult r = mp4::cut_movie(read, int64_t(file_size), "fuzz.mp4", req);
  if (r.kind == mp4::CutResult::Kind::refused) {
    check(!r.error.empty());
    return 0;
  }
  if (r.kind == mp4::CutResult::Kind::whole_file) return 0;
  check(r.data_offset >= 0 && r.data_length > 0);
  check(uint64_t(r.data_offset) + uint64_t(r.data_length) <= file_size);
  // The head's boxes: their sizes cover it, the last is mdat's header.
  const auto* p = reinterpret_cast<const uint8_t*>(r.head.data());
  size_t pos = 0;
  uint64_t mdat_size = 0;
  while (pos < r.head.size()) {
    check(r.head.size() - pos >= 8);
    uint64_t box = mp4::get32(p + pos);
    const uint32_t type = mp4::get32(p + pos + 4);
    size_t header = 8;
    if (box == 1) {
      check(r.head.size() - pos >= 16);
      box = mp4::get64(p + pos + 8);
      header = 16;
    }
    if (type == mp4::fourcc("mdat")) {
      check(pos + header == r.head.size());
      mdat_size = box - header;
      break;
    }
    check(box >= header && box <= r.head.size() - pos);
    pos += box;
  }
  check(mdat_size == uint64_t(r.data_length));
  return 0;
}
