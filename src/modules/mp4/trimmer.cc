#include "modules/mp4/trimmer.h"

#include <algorithm>
#include <string>

#include "modules/mp4/box_reader.h"
#include "modules/mp4/movie.h"
#include "modules/mp4/movie_reader.h"
#include "modules/mp4/track_tables.h"

namespace torii::mp4 {

namespace {

enum class TopLevel { ok, whole_file, fail };

TopLevel read_failed(Movie& m) {
  m.fail("read of mp4 file @ failed");
  return TopLevel::fail;
}

// The file's boxes in order, as nginx reads them: ftyp is kept (1 KB at
// most), moov read into memory (at most the larger of mp4_buffer_size
// and mp4_max_buffer_size), mdat noted; reading stops once both moov and
// mdat are known.
TopLevel read_top_level(const ReadAt& read_at, Movie& m) {
  int64_t offset = 0;
  const int64_t end = m.file_size;
  while (offset < end) {
    uint8_t bytes[16];
    const uint64_t available = std::min<uint64_t>(sizeof bytes, uint64_t(end - offset));
    if (!read_at(offset, available, bytes)) return read_failed(m);
    BoxHeader h;
    switch (read_box_header(bytes, available, uint64_t(end - offset), h)) {
      case HeaderStatus::ok:
        break;
      case HeaderStatus::end:
        return TopLevel::ok;
      case HeaderStatus::too_small:
        m.fail("@ mp4 atom is too small:" + std::to_string(h.size));
        return TopLevel::fail;
      case HeaderStatus::too_large:
        m.fail("@ mp4 atom too large:" + std::to_string(h.size));
        return TopLevel::fail;
      case HeaderStatus::truncated:
        m.fail("@ mp4 file truncated");
        return TopLevel::fail;
    }
    const int64_t data = offset + h.header_size;
    const uint64_t size = h.data_size();
    switch (h.type) {
      case fourcc("ftyp"): {
        if (size > 1024) {
          m.fail("@ mp4 ftyp atom is too large:" + std::to_string(size));
          return TopLevel::fail;
        }
        if (!m.ftyp.empty()) {
          m.fail("duplicate mp4 ftyp atom in @");
          return TopLevel::fail;
        }
        m.ftyp.resize(8 + size);
        put32(m.ftyp.data(), uint32_t(8 + size));
        put32(m.ftyp.data() + 4, h.type);
        if (size > 0 && !read_at(data, size, m.ftyp.data() + 8)) return read_failed(m);
        break;
      }
      case fourcc("moov"):
        // moov before mdat and the whole movie asked for: the file as it is.
        if (!m.have_mdat && m.start == 0 && m.length == 0) return TopLevel::whole_file;
        if (m.have_moov) {
          m.fail("duplicate mp4 moov atom in @");
          return TopLevel::fail;
        }
        if (size > m.buffer_size && size > m.max_buffer_size) {
          m.fail("@ mp4 moov atom is too large:" + std::to_string(size) +
                 ", you may want to increase mp4_max_buffer_size");
          return TopLevel::fail;
        }
        m.moov.resize(size);
        if (size > 0 && !read_at(data, size, m.moov.data())) return read_failed(m);
        if (!read_moov(m)) return TopLevel::fail;
        if (m.have_mdat) return TopLevel::ok;  // what follows moov is not read
        break;
      case fourcc("mdat"):
        if (m.have_mdat) {
          m.fail("duplicate mp4 mdat atom in @");
          return TopLevel::fail;
        }
        m.have_mdat = true;
        m.mdat_data_start = data;
        m.mdat_data_end = data + int64_t(size);
        if (!m.tracks.empty()) return TopLevel::ok;
        break;
      default:
        break;
    }
    offset += int64_t(h.size);
  }
  return TopLevel::ok;
}

void append(std::string& out, const Bytes& b) {
  if (b.set()) out.append(reinterpret_cast<const char*>(b.pos), b.size());
}

// The box of `type` among those in [offset, end) of the file; its data's
// offset and size. At most 64 boxes are looked at.
bool find_box(const ReadAt& read_at, int64_t offset, int64_t end, uint32_t type, int64_t& data, uint64_t& size) {
  for (int i = 0; i < 64 && offset < end; ++i) {
    uint8_t bytes[16];
    const uint64_t available = std::min<uint64_t>(sizeof bytes, uint64_t(end - offset));
    BoxHeader h;
    if (!read_at(offset, available, bytes) ||
        read_box_header(bytes, available, uint64_t(end - offset), h) != HeaderStatus::ok)
      return false;
    if (h.type == type) {
      data = offset + h.header_size;
      size = h.data_size();
      return true;
    }
    offset += int64_t(h.size);
  }
  return false;
}

}  // namespace

uint64_t movie_duration_ms(const ReadAt& read_at, int64_t file_size) {
  int64_t moov = 0, mvhd = 0;
  uint64_t moov_size = 0, mvhd_size = 0;
  if (!find_box(read_at, 0, file_size, fourcc("moov"), moov, moov_size) ||
      !find_box(read_at, moov, moov + int64_t(moov_size), fourcc("mvhd"), mvhd, mvhd_size) || mvhd_size < 100)
    return 0;
  uint8_t b[32];
  if (!read_at(mvhd, sizeof b, b)) return 0;
  // Offsets in the data (after the 8-byte header).
  const uint32_t timescale = b[0] == 0 ? get32(b + 12) : get32(b + 20);
  const uint64_t duration = b[0] == 0 ? get32(b + 16) : get64(b + 24);
  return timescale ? duration * 1000 / timescale : 0;
}

CutResult cut_movie(const ReadAt& read_at, int64_t file_size, std::string_view file_name, const CutRequest& req) {
  CutResult r;
  Movie m;
  m.file_name = file_name;
  m.start = req.start_ms;
  m.length = req.length_ms;
  m.start_key_frame = req.start_key_frame;
  m.buffer_size = req.buffer_size;
  m.max_buffer_size = req.max_buffer_size;
  m.file_size = file_size;

  switch (read_top_level(read_at, m)) {
    case TopLevel::whole_file:
      r.kind = CutResult::Kind::whole_file;
      return r;
    case TopLevel::fail:
      r.error = std::move(m.error);
      return r;
    case TopLevel::ok:
      break;
  }
  if (m.tracks.empty()) {
    m.fail("no mp4 trak atoms were found in @");
    r.error = std::move(m.error);
    return r;
  }
  if (!m.have_mdat) {
    m.fail("no mp4 mdat atom was found in @");
    r.error = std::move(m.error);
    return r;
  }

  uint64_t moov_size = m.mvhd.size();
  int64_t start_offset = m.file_size;
  int64_t end_offset = 0;
  for (Track& t : m.tracks) {
    if (!cut_track(m, t)) {
      r.error = std::move(m.error);
      return r;
    }
    moov_size += t.size;
    start_offset = std::min(start_offset, t.start_offset);
    end_offset = std::max(end_offset, t.end_offset);
  }
  if (end_offset <= start_offset) {
    m.fail("no data between start time and end time in @");
    r.error = std::move(m.error);
    return r;
  }
  moov_size += 8;
  if (start_offset >= m.mdat_data_end) {
    m.fail("start time is out mp4 mdat atom in @");
    r.error = std::move(m.error);
    return r;
  }

  // The mdat header: 64-bit when the data would not fit a 32-bit size.
  const uint64_t data_size = uint64_t(end_offset - start_offset);
  uint8_t mdat_header[16];
  size_t mdat_header_size = 8;
  if (data_size > 0xffffffffu - 8) {
    put32(mdat_header, 1);
    put64(mdat_header + 8, 16 + data_size);
    mdat_header_size = 16;
  } else {
    put32(mdat_header, uint32_t(8 + data_size));
  }
  put32(mdat_header + 4, fourcc("mdat"));

  const int64_t adjustment = int64_t(m.ftyp.size() + moov_size + mdat_header_size) - start_offset;
  for (Track& t : m.tracks) adjust_chunk_offsets(t, adjustment);

  r.head.reserve(m.ftyp.size() + moov_size + mdat_header_size);
  r.head.append(reinterpret_cast<const char*>(m.ftyp.data()), m.ftyp.size());
  uint8_t moov_header[8];
  put32(moov_header, uint32_t(moov_size));
  put32(moov_header + 4, fourcc("moov"));
  r.head.append(reinterpret_cast<const char*>(moov_header), 8);
  append(r.head, m.mvhd);
  for (const Track& t : m.tracks)
    for (const Bytes& b : t.out) append(r.head, b);
  r.head.append(reinterpret_cast<const char*>(mdat_header), mdat_header_size);
  r.data_offset = start_offset;
  r.data_length = end_offset - start_offset;
  if (m.timescale) {
    const uint8_t* h = m.mvhd.pos;
    const uint64_t duration = !h ? 0 : h[8] == 0 ? get32(h + 24) : get64(h + 32);
    r.duration_ms = duration * 1000 / m.timescale;
  }
  r.kind = CutResult::Kind::cut;
  return r;
}

}  // namespace torii::mp4
