#include "modules/mp4/movie_reader.h"

#include <string>

#include "modules/mp4/box_reader.h"

namespace torii::mp4 {

namespace {

enum class Step { ok, drop_track, fail };

// A box nginx keeps is written out with a plain 32-bit header made over
// the 8 bytes before its data (for a box with a 64-bit size, over the size
// field), so each reader starts from `data - 8`.
uint8_t* header_of(uint8_t* data) { return data - 8; }

void set_name(uint8_t* header, uint32_t type) { put32(header + 4, type); }

// A box whose whole bytes are written out as they are, with a fresh header.
uint8_t* whole_box(uint8_t* data, uint64_t size, uint32_t type, Bytes& slot) {
  uint8_t* h = header_of(data);
  put32(h, uint32_t(8 + size));
  set_name(h, type);
  slot = {h, h + 8 + size};
  return h;
}

// A container: its 8-byte header now, its size once the children's are known.
void container_header(uint8_t* data, uint32_t type, Bytes& slot) {
  uint8_t* h = header_of(data);
  set_name(h, type);
  slot = {h, h + 8};
}

using Visit = Step (*)(Movie&, uint32_t type, uint8_t* data, uint64_t size);

// The boxes in [pos, pos + size) of the moov data, each handed to `visit`.
Step walk(Movie& m, size_t pos, uint64_t size, Visit visit) {
  const size_t end = pos + size;
  while (pos < end) {
    BoxHeader h;
    switch (read_box_header(m.moov.data() + pos, end - pos, end - pos, h)) {
      case HeaderStatus::ok:
        break;
      case HeaderStatus::end:
        return Step::ok;
      case HeaderStatus::too_small:
        m.fail("@ mp4 atom is too small:" + std::to_string(h.size));
        return Step::fail;
      case HeaderStatus::too_large:
        m.fail("@ mp4 atom too large:" + std::to_string(h.size));
        return Step::fail;
      case HeaderStatus::truncated:
        m.fail("@ mp4 file truncated");
        return Step::fail;
    }
    const Step s = visit(m, h.type, m.moov.data() + pos + h.header_size, h.data_size());
    if (s != Step::ok) return s;
    pos += h.size;
  }
  return Step::ok;
}

Step fail(Movie& m, std::string_view text) {
  m.fail(text);
  return Step::fail;
}

Step duplicate(Movie& m, std::string_view name) {
  return fail(m, "duplicate mp4 " + std::string(name) + " atom in @");
}

// The cut's duration of a box whose duration was `duration` in `timescale`:
// less the start, at most the length. False when the start is past it.
bool cut_duration(const Movie& m, uint32_t timescale, uint64_t& duration, bool start_may_equal) {
  const uint64_t start_time = m.start * timescale / 1000;
  if (start_may_equal ? duration < start_time : duration <= start_time) return false;
  duration -= start_time;
  if (m.length) {
    const uint64_t length_time = m.length * timescale / 1000;
    if (duration > length_time) duration = length_time;
  }
  return true;
}

// ---- stbl: the sample tables ------------------------------------------

// A full box with an entry count at byte 12 and `entry` bytes per entry:
// its 16-byte head and its table, once the count fits the box.
Step table_box(Movie& m, uint8_t* data, uint64_t size, uint32_t type, std::string_view name, size_t entry,
               Slot head_slot, Slot data_slot, uint32_t& entries_out) {
  uint8_t* h = header_of(data);
  set_name(h, type);
  const std::string too_small = "@ mp4 " + std::string(name) + " atom too small";
  if (size < 8) return fail(m, too_small);
  const uint32_t entries = get32(h + 12);
  if (8 + uint64_t(entries) * entry > size) return fail(m, too_small);
  Track& t = m.tracks.back();
  if (t.out[head_slot].set()) return duplicate(m, name);
  entries_out = entries;
  t.out[head_slot] = {h, h + 16};
  t.out[data_slot] = {h + 16, h + 16 + size_t(entries) * entry};
  return Step::ok;
}

Step visit_stbl(Movie& m, uint32_t type, uint8_t* data, uint64_t size) {
  Track& t = m.tracks.back();
  switch (type) {
    case fourcc("stsd"): {
      Bytes box;
      whole_box(data, size, type, box);
      if (size < 16) return fail(m, "@ mp4 stsd atom too small");
      if (t.out[Slot::stsd].set()) return duplicate(m, "stsd");
      t.out[Slot::stsd] = box;
      t.size += box.size();
      return Step::ok;
    }
    case fourcc("stts"):
      return table_box(m, data, size, type, "stts", 8, Slot::stts, Slot::stts_data, t.time_to_sample_entries);
    case fourcc("stss"):
      return table_box(m, data, size, type, "stss", 4, Slot::stss, Slot::stss_data, t.sync_samples_entries);
    case fourcc("ctts"):
      return table_box(m, data, size, type, "ctts", 8, Slot::ctts, Slot::ctts_data, t.composition_offset_entries);
    case fourcc("stsc"):
      return table_box(m, data, size, type, "stsc", kStscEntry, Slot::stsc, Slot::stsc_data,
                       t.sample_to_chunk_entries);
    case fourcc("stco"):
    case fourcc("co64"): {
      const bool wide = type == fourcc("co64");
      uint8_t* h = header_of(data);
      set_name(h, type);
      const std::string too_small = wide ? "@ mp4 co64 atom too small" : "@ mp4 stco atom too small";
      if (size < 8) return fail(m, too_small);
      const uint32_t entries = get32(h + 12);
      const size_t entry = wide ? 8 : 4;
      if (8 + uint64_t(entries) * entry > size) return fail(m, too_small);
      if (t.out[Slot::stco].set() || t.out[Slot::co64].set()) return fail(m, "duplicate mp4 stco/co64 atom in @");
      t.chunks = entries;
      const Slot head = wide ? Slot::co64 : Slot::stco;
      const Slot table = wide ? Slot::co64_data : Slot::stco_data;
      t.out[head] = {h, h + 16};
      t.out[table] = {h + 16, h + 16 + size_t(entries) * entry};
      return Step::ok;
    }
    case fourcc("stsz"): {
      uint8_t* h = header_of(data);
      set_name(h, type);
      if (size < 12) return fail(m, "@ mp4 stsz atom too small");
      const uint32_t uniform = get32(h + 12);
      const uint32_t entries = get32(h + 16);
      if (t.out[Slot::stsz].set()) return duplicate(m, "stsz");
      t.sample_sizes_entries = entries;
      t.out[Slot::stsz] = {h, h + 20};
      if (uniform == 0) {
        if (12 + uint64_t(entries) * 4 > size) return fail(m, "@ mp4 stsz atom too small");
        t.out[Slot::stsz_data] = {h + 20, h + 20 + size_t(entries) * 4};
      } else {
        // Every sample has the same size: the box goes out as it is (nginx
        // leaves its count, and the start inside a chunk, uncut; it writes
        // only the first 20 bytes, which is the whole box in any real file).
        put32(h, uint32_t(8 + size));
        t.out[Slot::stsz] = {h, h + 8 + size};
        t.size += 8 + size;
      }
      return Step::ok;
    }
    default:
      return Step::ok;
  }
}

// ---- minf, mdia, trak -----------------------------------------------------

Step visit_minf(Movie& m, uint32_t type, uint8_t* data, uint64_t size) {
  Track& t = m.tracks.back();
  switch (type) {
    case fourcc("vmhd"):
    case fourcc("smhd"): {
      Bytes box;
      whole_box(data, size, type, box);
      if (t.out[Slot::vmhd].set() || t.out[Slot::smhd].set()) return fail(m, "duplicate mp4 vmhd/smhd atom in @");
      if (type == fourcc("vmhd")) {
        t.out[Slot::vmhd] = box;
        t.vmhd_size += box.size();
      } else {
        t.out[Slot::smhd] = box;
        t.smhd_size += box.size();
      }
      return Step::ok;
    }
    case fourcc("dinf"): {
      Bytes box;
      whole_box(data, size, type, box);
      if (t.out[Slot::dinf].set()) return duplicate(m, "dinf");
      t.out[Slot::dinf] = box;
      t.dinf_size += box.size();
      return Step::ok;
    }
    case fourcc("stbl"):
      if (t.out[Slot::stbl].set()) {
        set_name(header_of(data), type);
        return duplicate(m, "stbl");
      }
      container_header(data, type, t.out[Slot::stbl]);
      return walk(m, size_t(data - m.moov.data()), size, &visit_stbl);
    default:
      return Step::ok;
  }
}

Step read_mdhd(Movie& m, uint8_t* data, uint64_t size) {
  uint8_t* h = header_of(data);
  set_name(h, fourcc("mdhd"));
  if (size < 24) return fail(m, "@ mp4 mdhd atom too small");
  uint32_t timescale;
  uint64_t duration;
  if (h[8] == 0) {
    timescale = get32(h + 20);
    duration = get32(h + 24);
  } else {
    if (size < 36) return fail(m, "@ mp4 mdhd atom too small");
    timescale = get32(h + 28);
    duration = get64(h + 32);
  }
  if (!cut_duration(m, timescale, duration, false)) return Step::drop_track;
  Track& t = m.tracks.back();
  if (t.out[Slot::mdhd].set()) return duplicate(m, "mdhd");
  t.mdhd_size = size_t(8 + size);
  t.timescale = timescale;
  t.duration = duration;  // written in once the cut is known (update_mdhd)
  put32(h, uint32_t(8 + size));
  t.out[Slot::mdhd] = {h, h + 8 + size};
  return Step::ok;
}

Step visit_mdia(Movie& m, uint32_t type, uint8_t* data, uint64_t size) {
  Track& t = m.tracks.back();
  switch (type) {
    case fourcc("mdhd"):
      return read_mdhd(m, data, size);
    case fourcc("hdlr"): {
      Bytes box;
      whole_box(data, size, type, box);
      if (t.out[Slot::hdlr].set()) return duplicate(m, "hdlr");
      t.out[Slot::hdlr] = box;
      t.hdlr_size = box.size();
      return Step::ok;
    }
    case fourcc("minf"):
      set_name(header_of(data), type);
      if (t.out[Slot::minf].set()) return duplicate(m, "minf");
      container_header(data, type, t.out[Slot::minf]);
      return walk(m, size_t(data - m.moov.data()), size, &visit_minf);
    default:
      return Step::ok;
  }
}

Step read_tkhd(Movie& m, uint8_t* data, uint64_t size) {
  uint8_t* h = header_of(data);
  set_name(h, fourcc("tkhd"));
  if (size < 84) return fail(m, "@ mp4 tkhd atom too small");
  uint64_t duration;
  if (h[8] == 0) {
    duration = get32(h + 28);
  } else {
    if (size < 96) return fail(m, "@ mp4 tkhd atom too small");
    duration = get64(h + 36);
  }
  // In the movie's timescale (mvhd's, when it came first).
  if (!cut_duration(m, m.timescale, duration, false)) return Step::drop_track;
  Track& t = m.tracks.back();
  if (t.out[Slot::tkhd].set()) return duplicate(m, "tkhd");
  t.tkhd_size = size_t(8 + size);
  t.movie_duration = duration;
  put32(h, uint32_t(8 + size));
  if (h[8] == 0) {
    put32(h + 28, uint32_t(duration));
  } else {
    put64(h + 36, duration);
  }
  t.out[Slot::tkhd] = {h, h + 8 + size};
  return Step::ok;
}

Step visit_trak(Movie& m, uint32_t type, uint8_t* data, uint64_t size) {
  Track& t = m.tracks.back();
  switch (type) {
    case fourcc("tkhd"):
      return read_tkhd(m, data, size);
    case fourcc("mdia"):
      set_name(header_of(data), type);
      if (t.out[Slot::mdia].set()) return duplicate(m, "mdia");
      container_header(data, type, t.out[Slot::mdia]);
      return walk(m, size_t(data - m.moov.data()), size, &visit_mdia);
    default:
      return Step::ok;
  }
}

// ---- moov -------------------------------------------------------------------

Step read_mvhd(Movie& m, uint8_t* data, uint64_t size) {
  if (m.mvhd.set()) return duplicate(m, "mvhd");
  uint8_t* h = header_of(data);
  set_name(h, fourcc("mvhd"));
  if (size < 100) return fail(m, "@ mp4 mvhd atom too small");
  uint32_t timescale;
  uint64_t duration;
  if (h[8] == 0) {
    timescale = get32(h + 20);
    duration = get32(h + 24);
  } else {
    if (size < 112) return fail(m, "@ mp4 mvhd atom too small");
    timescale = get32(h + 28);
    duration = get64(h + 32);
  }
  m.timescale = timescale;
  if (!cut_duration(m, timescale, duration, true)) return fail(m, "@ mp4 start time exceeds file duration");
  put32(h, uint32_t(8 + size));
  if (h[8] == 0) {
    put32(h + 24, uint32_t(duration));
  } else {
    put64(h + 32, duration);
  }
  m.mvhd = {h, h + 8 + size};
  return Step::ok;
}

Step visit_moov(Movie& m, uint32_t type, uint8_t* data, uint64_t size) {
  switch (type) {
    case fourcc("mvhd"):
      return read_mvhd(m, data, size);
    case fourcc("trak"): {
      if (m.tracks.size() >= kMaxTracks) return fail(m, "too many mp4 trak atoms in @");
      m.tracks.emplace_back();
      container_header(data, type, m.tracks.back().out[Slot::trak]);
      const Step s = walk(m, size_t(data - m.moov.data()), size, &visit_trak);
      if (s == Step::drop_track) {
        m.tracks.pop_back();  // it ends before the start
        return Step::ok;
      }
      return s;
    }
    case fourcc("cmov"):
      return fail(m, "@ mp4 compressed moov atom (cmov) is not supported");
    default:
      return Step::ok;
  }
}

}  // namespace

bool read_moov(Movie& m) {
  m.have_moov = true;
  return walk(m, 0, m.moov.size(), &visit_moov) == Step::ok;
}

}  // namespace torii::mp4
