#include "modules/mp4/track_tables.h"

#include <string>

#include "modules/mp4/box_reader.h"

namespace torii::mp4 {

namespace {

constexpr size_t kSttsEntry = 8;  // sample count, sample duration
constexpr size_t kCttsEntry = 8;  // sample count, composition offset

// ---- stts: time to sample -----------------------------------------------

// The sync sample at or before `start_sample` (0-based) with
// mp4_start_key_frame: how many samples before the start it is.
bool seek_key_frame(Movie& m, Track& t, uint32_t start_sample, uint32_t& key_prefix) {
  key_prefix = 0;
  if (!m.start_key_frame || !t.out[Slot::stss_data].set()) return true;
  const Bytes& data = t.out[Slot::stss_data];
  ++start_sample;  // sync samples count from 1
  for (const uint8_t* e = data.pos; e < data.last; e += 4) {
    const uint32_t sample = get32(e);
    if (sample == 0) return m.fail("zero sync sample in @");
    if (sample > start_sample) break;
    key_prefix = start_sample - sample;
  }
  return true;
}

// The first (`start`) or last sample of the cut, from the durations.
bool crop_stts(Movie& m, Track& t, bool start) {
  uint64_t time_ms;
  if (start) {
    time_ms = m.start;
  } else if (m.length) {
    time_ms = m.length;
  } else {
    return true;
  }
  Bytes& data = t.out[Slot::stts_data];
  uint64_t start_time = time_ms * t.timescale / 1000 + t.prefix;
  uint64_t entries = t.time_to_sample_entries;
  uint64_t start_sample = 0;
  uint32_t count = 0, duration = 0, rest = 0;
  uint8_t* entry = data.pos;
  bool found = false;
  for (; entry < data.last; entry += kSttsEntry) {
    count = get32(entry);
    duration = get32(entry + 4);
    if (start_time < uint64_t(count) * duration) {
      start_sample += start_time / duration;
      rest = uint32_t(start_time / duration);
      found = true;
      break;
    }
    start_sample += count;
    start_time -= uint64_t(count) * duration;
    --entries;
  }
  if (!found) {
    if (start) return m.fail("start time is out mp4 stts samples in @");
    t.end_sample = t.start_sample + start_sample;
    return true;
  }
  if (!start) {
    put32(entry, rest);
    data.last = entry + kSttsEntry;
    t.time_to_sample_entries -= uint32_t(entries - 1);
    t.end_sample = t.start_sample + start_sample;
    return true;
  }
  uint32_t key_prefix = 0;
  if (!seek_key_frame(m, t, uint32_t(start_sample), key_prefix)) return false;
  start_sample -= key_prefix;
  // The key frame may lie in earlier entries: walk back over them. The
  // samples before this point add up to at least key_prefix, so the walk
  // stays in the table; the check keeps it there whatever the file says.
  while (rest < key_prefix) {
    if (entry == data.pos) return m.fail("start time is out mp4 stts samples in @");
    t.prefix += uint32_t(rest * duration);
    key_prefix -= rest;
    entry -= kSttsEntry;
    ++entries;
    count = get32(entry);
    duration = get32(entry + 4);
    rest = count;
  }
  t.prefix += uint32_t(key_prefix * duration);
  t.duration += t.prefix;
  rest -= key_prefix;
  put32(entry, count - rest);
  data.pos = entry;
  t.time_to_sample_entries = uint32_t(entries);
  t.start_sample = start_sample;
  return true;
}

bool update_stts(Movie& m, Track& t) {
  if (!t.out[Slot::stts_data].set()) return m.fail("no mp4 stts atoms were found in @");
  if (!crop_stts(m, t, true) || !crop_stts(m, t, false)) return false;
  const size_t size = 16 + t.out[Slot::stts_data].size();
  t.size += size;
  uint8_t* h = t.out[Slot::stts].pos;
  put32(h, uint32_t(size));
  put32(h + 12, t.time_to_sample_entries);
  return true;
}

// ---- stss: sync samples -----------------------------------------------------

void crop_stss(Movie& m, Track& t, bool start) {
  uint32_t first;
  if (start) {
    first = uint32_t(t.start_sample + 1);  // sync samples count from 1
  } else if (m.length) {
    first = uint32_t(t.end_sample + 1);
  } else {
    return;
  }
  Bytes& data = t.out[Slot::stss_data];
  uint32_t entries = t.sync_samples_entries;
  uint8_t* entry = data.pos;
  for (; entry < data.last; entry += 4) {
    if (get32(entry) >= first) break;
    --entries;
  }
  if (start) {
    data.pos = entry;
    t.sync_samples_entries = entries;
  } else {
    data.last = entry;
    t.sync_samples_entries -= entries;
  }
}

void update_stss(Movie& m, Track& t) {
  if (!t.out[Slot::stss_data].set()) return;
  crop_stss(m, t, true);
  crop_stss(m, t, false);
  const Bytes data = t.out[Slot::stss_data];
  if (t.sync_samples_entries) {
    const uint32_t start_sample = uint32_t(t.start_sample);
    for (uint8_t* e = data.pos; e < data.last; e += 4) put32(e, get32(e) - start_sample);
  } else {
    t.out[Slot::stss_data].clear();
  }
  const size_t size = 16 + data.size();
  t.size += size;
  uint8_t* h = t.out[Slot::stss].pos;
  put32(h, uint32_t(size));
  put32(h + 12, t.sync_samples_entries);
}

// ---- ctts: composition offsets ----------------------------------------------

void crop_ctts(Movie& m, Track& t, bool start) {
  uint32_t sample;  // 1-based, within what the start left
  if (start) {
    sample = uint32_t(t.start_sample + 1);
  } else if (m.length) {
    sample = uint32_t(t.end_sample - t.start_sample + 1);
  } else {
    return;
  }
  Bytes& data = t.out[Slot::ctts_data];
  uint32_t entries = t.composition_offset_entries;
  for (uint8_t* entry = data.pos; entry < data.last; entry += kCttsEntry) {
    const uint32_t count = get32(entry);
    if (sample <= count) {
      const uint32_t rest = sample - 1;
      if (start) {
        put32(entry, count - rest);
        data.pos = entry;
        t.composition_offset_entries = entries;
      } else {
        put32(entry, rest);
        data.last = entry + kCttsEntry;
        t.composition_offset_entries -= entries - 1;
      }
      return;
    }
    sample -= count;
    --entries;
  }
  if (start) {
    data.pos = data.last;
    t.composition_offset_entries = 0;
  }
}

void update_ctts(Movie& m, Track& t) {
  if (!t.out[Slot::ctts_data].set()) return;
  crop_ctts(m, t, true);
  crop_ctts(m, t, false);
  if (t.composition_offset_entries == 0) {
    t.out[Slot::ctts].clear();
    t.out[Slot::ctts_data].clear();
    return;
  }
  const size_t size = 16 + t.out[Slot::ctts_data].size();
  t.size += size;
  uint8_t* h = t.out[Slot::ctts].pos;
  put32(h, uint32_t(size));
  put32(h + 12, t.composition_offset_entries);
}

// ---- stsc: sample to chunk ----------------------------------------------------

// The chunk holding the first (`start`) or last sample of the cut. A chunk
// cut in two gets an entry of its own for its kept samples (the track's
// stsc_start_entry or stsc_end_entry) unless its run is that one chunk.
bool crop_stsc(Movie& m, Track& t, bool start) {
  uint64_t entries = uint64_t(t.sample_to_chunk_entries) - 1;
  uint32_t start_sample;
  uint32_t samples = 0;
  // The samples of the last chunk run passed, for an end on a chunk's edge.
  uint32_t prev_samples = 0;
  if (start) {
    start_sample = uint32_t(t.start_sample);
  } else if (m.length) {
    start_sample = uint32_t(t.end_sample - t.start_sample);
    if (t.out[Slot::stsc_start].set()) {
      // The first chunk's own entry: its samples count first.
      uint8_t* first = t.out[Slot::stsc_start].pos;
      samples = get32(first + 4);
      --entries;
      if (samples > start_sample) {
        samples = start_sample;
        put32(first + 4, samples);
      }
      start_sample -= samples;
      // An end inside (or at the edge of) that first chunk keeps these
      // samples of it. nginx leaves this at 0 and so cuts the track's data
      // off at its first byte while its tables still name the samples: a
      // broken file, for any cut whose start and end fall in one chunk.
      prev_samples = samples;
    }
  } else {
    return true;
  }

  Bytes& data = t.out[Slot::stsc_data];
  if (data.pos >= data.last) return m.fail("zero number of entries in stsc atom in @");
  uint8_t* entry = data.pos;
  uint32_t chunk = get32(entry);
  samples = get32(entry + 4);
  uint32_t id = get32(entry + 8);
  uint32_t next_chunk = 0;
  entry += kStscEntry;
  bool found = false;
  for (; entry < data.last; entry += kStscEntry) {
    next_chunk = get32(entry);
    if (next_chunk < chunk) return m.fail("unordered mp4 stsc chunks in @");
    const uint64_t n = uint64_t(next_chunk - chunk) * samples;
    if (start_sample < n) {
      found = true;
      break;
    }
    start_sample -= uint32_t(n);
    if (next_chunk > chunk) prev_samples = samples;
    chunk = next_chunk;
    samples = get32(entry + 4);
    id = get32(entry + 8);
    --entries;
  }
  if (!found) {
    next_chunk = t.chunks + 1;
    if (next_chunk < chunk) return m.fail("unordered mp4 stsc chunks in @");
    const uint64_t n = uint64_t(next_chunk - chunk) * samples;
    if (start_sample > n) return m.fail(start ? "start time is out mp4 stsc chunks in @" : "end time is out mp4 stsc chunks in @");
  }
  ++entries;
  entry -= kStscEntry;
  if (samples == 0) return m.fail("zero number of samples in @");
  if (chunk == 0) return m.fail("zero chunk in @");

  const uint64_t target_chunk = uint64_t(chunk - 1) + start_sample / samples;
  const uint64_t chunk_samples = start_sample % samples;
  if (start) {
    data.pos = entry;
    t.sample_to_chunk_entries = uint32_t(entries);
    t.start_chunk = target_chunk;
    t.start_chunk_samples = chunk_samples;
    put32(entry, uint32_t(t.start_chunk + 1));
    samples -= uint32_t(chunk_samples);
  } else {
    if (start_sample) {
      data.last = entry + kStscEntry;
      t.sample_to_chunk_entries -= uint32_t(entries - 1);
      t.end_chunk_samples = samples;
    } else {
      data.last = entry;
      t.sample_to_chunk_entries -= uint32_t(entries);
      t.end_chunk_samples = prev_samples;
    }
    if (chunk_samples) {
      t.end_chunk = target_chunk + 1;
      t.end_chunk_samples = chunk_samples;
    } else {
      t.end_chunk = target_chunk;
    }
    samples = uint32_t(chunk_samples);
    next_chunk = chunk + 1;
  }

  if (chunk_samples && uint64_t(next_chunk) - target_chunk == 2) {
    put32(entry + 4, samples);  // the run is that one chunk: its entry says it
  } else if (chunk_samples && start) {
    uint8_t* first = t.stsc_start_entry.data();
    put32(first, 1);
    put32(first + 4, samples);
    put32(first + 8, id);
    t.out[Slot::stsc_start] = {first, first + kStscEntry};
    put32(entry, uint32_t(t.start_chunk + 2));
    ++t.sample_to_chunk_entries;
  } else if (chunk_samples) {
    uint8_t* last = t.stsc_end_entry.data();
    put32(last, uint32_t(t.end_chunk - t.start_chunk));
    put32(last + 4, samples);
    put32(last + 8, id);
    t.out[Slot::stsc_end] = {last, last + kStscEntry};
    ++t.sample_to_chunk_entries;
  }
  return true;
}

bool update_stsc(Movie& m, Track& t) {
  if (!t.out[Slot::stsc_data].set()) return m.fail("no mp4 stsc atoms were found in @");
  if (t.sample_to_chunk_entries == 0) return m.fail("zero number of entries in stsc atom in @");
  if (!crop_stsc(m, t, true) || !crop_stsc(m, t, false)) return false;
  const Bytes& data = t.out[Slot::stsc_data];
  for (uint8_t* e = data.pos; e < data.last; e += kStscEntry) put32(e, get32(e) - uint32_t(t.start_chunk));
  const size_t size = 16 + size_t(t.sample_to_chunk_entries) * kStscEntry;
  t.size += size;
  uint8_t* h = t.out[Slot::stsc].pos;
  put32(h, uint32_t(size));
  put32(h + 12, t.sample_to_chunk_entries);
  return true;
}

// ---- stsz: sample sizes ---------------------------------------------------------

// The sizes of the `n` samples before `end`, which must lie in the table
// from `table` on.
bool sum_sizes(const uint8_t* table, const uint8_t* end, uint64_t n, uint64_t& sum) {
  if (n > uint64_t(end - table) / 4) return false;
  for (const uint8_t* p = end - n * 4; p < end; p += 4) sum += get32(p);
  return true;
}

bool update_stsz(Movie& m, Track& t) {
  Bytes& data = t.out[Slot::stsz_data];
  if (!data.set()) return true;  // one size for every sample
  uint64_t entries = t.sample_sizes_entries;
  if (t.start_sample >= entries) return m.fail("start time is out mp4 stsz samples in @");
  const uint8_t* table = data.pos;
  entries -= t.start_sample;
  data.pos += t.start_sample * 4;
  if (!sum_sizes(table, data.pos, t.start_chunk_samples, t.start_chunk_samples_size) ||
      t.start_chunk_samples_size > uint64_t(m.file_size))
    return m.fail("too large mp4 start samples size in @");
  if (m.length) {
    if (t.end_sample - t.start_sample > entries) return m.fail("end time is out mp4 stsz samples in @");
    entries = t.end_sample - t.start_sample;
    data.last = data.pos + entries * 4;
    if (!sum_sizes(table, data.last, t.end_chunk_samples, t.end_chunk_samples_size) ||
        t.end_chunk_samples_size > uint64_t(m.file_size))
      return m.fail("too large mp4 end samples size in @");
  }
  const size_t size = 20 + data.size();
  t.size += size;
  uint8_t* h = t.out[Slot::stsz].pos;
  put32(h, uint32_t(size));
  put32(h + 16, uint32_t(entries));
  return true;
}

// ---- stco / co64: chunk offsets ---------------------------------------------------

template <bool kWide>
bool update_chunk_offsets(Movie& m, Track& t) {
  constexpr size_t kEntry = kWide ? 8 : 4;
  const char* name = kWide ? "co64" : "stco";
  Bytes& data = t.out[kWide ? Slot::co64_data : Slot::stco_data];
  if (!data.set()) return m.fail(std::string("no mp4 ") + name + " atoms were found in @");
  if (t.start_chunk >= t.chunks) return m.fail(std::string("start time is out mp4 ") + name + " chunks in @");
  auto get = [](const uint8_t* p) -> uint64_t { return kWide ? get64(p) : get32(p); };
  // The first and last byte kept must lie in the file (and, for stco, be
  // an offset stco can hold).
  auto fits = [&](uint64_t offset, uint64_t samples_size) {
    if (offset > uint64_t(m.file_size) - samples_size) return false;
    return kWide || offset + samples_size <= 0xffffffffu;
  };
  data.pos += t.start_chunk * kEntry;
  uint64_t offset = get(data.pos);
  if (!fits(offset, t.start_chunk_samples_size)) return m.fail("too large chunk offset in @");
  t.start_offset = int64_t(offset + t.start_chunk_samples_size);
  if (kWide) {
    put64(data.pos, uint64_t(t.start_offset));
  } else {
    put32(data.pos, uint32_t(t.start_offset));
  }
  uint64_t entries;
  if (m.length) {
    if (t.end_chunk > t.chunks || t.end_chunk < t.start_chunk)
      return m.fail(std::string("end time is out mp4 ") + name + " chunks in @");
    entries = t.end_chunk - t.start_chunk;
    data.last = data.pos + entries * kEntry;
    if (entries) {
      // The last chunk's offset (the first's, as just moved, when it is the same).
      offset = get(data.last - kEntry);
      if (!fits(offset, t.end_chunk_samples_size)) return m.fail("too large chunk offset in @");
      t.end_offset = int64_t(offset + t.end_chunk_samples_size);
    }
  } else {
    entries = t.chunks - t.start_chunk;
    t.end_offset = m.mdat_data_end;
  }
  if (entries == 0) {
    t.start_offset = m.file_size;
    t.end_offset = 0;
  }
  const size_t size = 16 + data.size();
  t.size += size;
  uint8_t* h = t.out[kWide ? Slot::co64 : Slot::stco].pos;
  put32(h, uint32_t(size));
  put32(h + 12, uint32_t(entries));
  return true;
}

// ---- the containers ------------------------------------------------------------

void close_container(Track& t, Slot slot) {
  t.size += 8;
  if (t.out[slot].set()) put32(t.out[slot].pos, uint32_t(t.size));
}

void update_mdhd(Track& t) {
  Bytes& box = t.out[Slot::mdhd];
  if (!box.set()) return;
  if (box.pos[8] == 0) {
    put32(box.pos + 24, uint32_t(t.duration));
  } else {
    put64(box.pos + 32, t.duration);
  }
  t.size += t.mdhd_size;
}

// With mp4_start_key_frame, the samples before the start that the key
// frame brought in are hidden by an edit list that starts the track after
// them.
void update_edts(Track& t) {
  if (t.prefix == 0) return;
  uint8_t* edts = t.edts_box.data();
  put32(edts, uint32_t(8 + kElstBox));
  put32(edts + 4, fourcc("edts"));
  t.out[Slot::edts] = {edts, edts + 8};
  uint8_t* elst = t.elst_box.data();
  put32(elst, uint32_t(kElstBox));
  put32(elst + 4, fourcc("elst"));
  elst[8] = 1;  // version 1: 64-bit fields
  elst[9] = elst[10] = elst[11] = 0;
  put32(elst + 12, 1);
  put64(elst + 16, t.movie_duration);
  put64(elst + 24, t.prefix);
  put16(elst + 32, 1);
  put16(elst + 34, 0);
  t.out[Slot::elst] = {elst, elst + kElstBox};
  t.size += 8 + kElstBox;
}

}  // namespace

bool cut_track(Movie& m, Track& t) {
  if (!update_stts(m, t)) return false;
  update_stss(m, t);
  update_ctts(m, t);
  if (!update_stsc(m, t) || !update_stsz(m, t)) return false;
  if (t.out[Slot::co64_data].set() ? !update_chunk_offsets<true>(m, t) : !update_chunk_offsets<false>(m, t))
    return false;
  close_container(t, Slot::stbl);
  t.size += t.vmhd_size + t.smhd_size + t.dinf_size;
  close_container(t, Slot::minf);
  update_mdhd(t);
  t.size += t.hdlr_size;
  close_container(t, Slot::mdia);
  t.size += t.tkhd_size;
  update_edts(t);
  close_container(t, Slot::trak);
  return true;
}

void adjust_chunk_offsets(Track& t, int64_t adjustment) {
  if (t.out[Slot::co64_data].set()) {
    const Bytes& d = t.out[Slot::co64_data];
    for (uint8_t* e = d.pos; e < d.last; e += 8) put64(e, get64(e) + uint64_t(adjustment));
  } else {
    const Bytes& d = t.out[Slot::stco_data];
    for (uint8_t* e = d.pos; e < d.last; e += 4) put32(e, get32(e) + uint32_t(int32_t(adjustment)));
  }
}

}  // namespace torii::mp4
