// The mp4 module's cutter on a small MP4 written here by hand: one video
// track of 10 one-second samples in chunks of 2, key frames at 1 and 6.
// Sample i's bytes are all `i`, so a cut can be read back byte by byte.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "modules/mp4/box_reader.h"
#include "modules/mp4/trimmer.h"

namespace torii::mp4 {
namespace {

using Blob = std::string;

void u32(Blob& b, uint32_t v) {
  uint8_t x[4];
  put32(x, v);
  b.append(reinterpret_cast<char*>(x), 4);
}

Blob make_box(const char* type, const Blob& payload) {
  Blob b;
  u32(b, uint32_t(8 + payload.size()));
  b.append(type, 4);
  return b + payload;
}

Blob full(const char* type, const Blob& payload) { return make_box(type, Blob(4, '\0') + payload); }

Blob words(std::initializer_list<uint32_t> vs) {
  Blob b;
  for (uint32_t v : vs) u32(b, v);
  return b;
}

constexpr int kSamples = 10;
constexpr int kSampleSize = 16;

// ftyp, moov (mvhd, trak), mdat; or ftyp, mdat, moov.
Blob movie(bool moov_first, uint32_t stts_count_override = 0) {
  const Blob ftyp = make_box("ftyp", "isom" + words({0}) + "isom");
  Blob samples;
  for (int i = 0; i < kSamples; ++i) samples.append(kSampleSize, char('a' + i));
  auto moov = [&](uint32_t data_at) {
    Blob stco_entries;
    for (int c = 0; c < kSamples / 2; ++c) u32(stco_entries, data_at + c * 2 * kSampleSize);
    Blob stsz = words({0, kSamples});
    for (int i = 0; i < kSamples; ++i) u32(stsz, kSampleSize);
    const Blob stbl = make_box(
        "stbl", full("stsd", words({1, 8}) + "mp4v") + full("stts", words({stts_count_override ? stts_count_override : 1, kSamples, 1})) +
                    full("stss", words({2, 1, 6})) + full("stsc", words({1, 1, 2, 1})) + full("stsz", stsz) +
                    full("stco", words({kSamples / 2}) + stco_entries));
    const Blob mdhd = full("mdhd", words({0, 0, 1, kSamples}) + Blob(4, '\0'));
    const Blob tkhd = full("tkhd", words({0, 0, 1, 0, kSamples}) + Blob(60, '\0'));
    const Blob trak = make_box(
        "trak", tkhd + make_box("mdia", mdhd + full("hdlr", Blob(20, '\0')) +
                                           make_box("minf", full("vmhd", Blob(8, '\0')) + stbl)));
    const Blob mvhd = full("mvhd", words({0, 0, 1, kSamples}) + Blob(80, '\0'));
    return make_box("moov", mvhd + trak);
  };
  if (moov_first) {
    const size_t moov_size = moov(0).size();
    return ftyp + moov(uint32_t(ftyp.size() + moov_size + 8)) + make_box("mdat", samples);
  }
  return ftyp + make_box("mdat", samples) + moov(uint32_t(ftyp.size() + 8));
}

CutResult cut(const Blob& file, uint64_t start_ms, uint64_t length_ms = 0, bool key = false) {
  CutRequest req;
  req.start_ms = start_ms;
  req.length_ms = length_ms;
  req.start_key_frame = key;
  ReadAt read = [&file](int64_t off, size_t n, uint8_t* out) {
    if (off < 0 || uint64_t(off) + n > file.size()) return false;
    std::memcpy(out, file.data() + off, n);
    return true;
  };
  return cut_movie(read, int64_t(file.size()), "/m.mp4", req);
}

// The response's bytes: head, then the file's range.
Blob body(const Blob& file, const CutResult& r) {
  return r.head + file.substr(size_t(r.data_offset), size_t(r.data_length));
}

// The value of the first table entry of `type` in `b` (after its count).
const uint8_t* find_box(const Blob& b, const char* type) {
  const size_t at = b.find(type);
  return at == Blob::npos ? nullptr : reinterpret_cast<const uint8_t*>(b.data() + at - 4);
}

TEST(Mp4Cut, MoovFirstFromZeroIsTheWholeFile) {
  EXPECT_EQ(cut(movie(true), 0).kind, CutResult::Kind::whole_file);
}

TEST(Mp4Cut, StartInsideAChunk) {
  const Blob file = movie(true);
  const CutResult r = cut(file, 3000);
  ASSERT_EQ(r.kind, CutResult::Kind::cut) << r.error;
  const Blob out = body(file, r);
  // Samples 3..9 follow the head, in order.
  Blob want;
  for (int i = 3; i < kSamples; ++i) want.append(kSampleSize, char('a' + i));
  EXPECT_EQ(out.substr(r.head.size()), want);
  // stts: 7 samples; stsz: 7 sizes; stco's first chunk starts at the data.
  const uint8_t* stts = find_box(out, "stts");
  ASSERT_NE(stts, nullptr);
  EXPECT_EQ(get32(stts + 12), 1u);
  EXPECT_EQ(get32(stts + 16), 7u);
  const uint8_t* stsz = find_box(out, "stsz");
  EXPECT_EQ(get32(stsz + 16), 7u);
  const uint8_t* stco = find_box(out, "stco");
  EXPECT_EQ(get32(stco + 12), 4u);  // chunks 2..5 (sample 3 is chunk 2's second)
  EXPECT_EQ(get32(stco + 16), r.head.size());
  // stsc: the cut chunk has a run of its own (1 sample), then 2 a chunk.
  const uint8_t* stsc = find_box(out, "stsc");
  EXPECT_EQ(get32(stsc + 12), 2u);
  EXPECT_EQ(get32(stsc + 16), 1u);
  EXPECT_EQ(get32(stsc + 20), 1u);
  EXPECT_EQ(get32(stsc + 28), 2u);
  EXPECT_EQ(get32(stsc + 32), 2u);
  // stss: key frame 6 becomes 3.
  const uint8_t* stss = find_box(out, "stss");
  EXPECT_EQ(get32(stss + 12), 1u);
  EXPECT_EQ(get32(stss + 16), 3u);
  // Durations: 10 s less 3.
  const uint8_t* mvhd = find_box(out, "mvhd");
  EXPECT_EQ(get32(mvhd + 24), 7u);
  EXPECT_EQ(get32(find_box(out, "mdhd") + 24), 7u);
  // The sizes add up: moov's header says its length.
  const size_t moov_at = out.find("moov") - 4;
  EXPECT_EQ(get32(reinterpret_cast<const uint8_t*>(out.data() + moov_at)) + moov_at + 8, r.head.size());
}

TEST(Mp4Cut, StartAndEnd) {
  const Blob file = movie(false);
  const CutResult r = cut(file, 2000, 4000);  // samples 2..5
  ASSERT_EQ(r.kind, CutResult::Kind::cut) << r.error;
  Blob want;
  for (int i = 2; i < 6; ++i) want.append(kSampleSize, char('a' + i));
  EXPECT_EQ(body(file, r).substr(r.head.size()), want);
  EXPECT_EQ(get32(find_box(r.head, "mvhd") + 24), 4u);
}

TEST(Mp4Cut, KeyFrameBringsAnEditList) {
  const Blob file = movie(true);
  const CutResult r = cut(file, 8000, 0, true);  // key frame 6 (index 5)
  ASSERT_EQ(r.kind, CutResult::Kind::cut) << r.error;
  EXPECT_EQ(body(file, r).substr(r.head.size(), 1), "f");
  const uint8_t* elst = find_box(r.head, "elst");
  ASSERT_NE(elst, nullptr);
  EXPECT_EQ(get64(elst + 24), 3u);  // media time: 3 samples of 1 s hidden
}

TEST(Mp4Cut, StartPastTheEnd) {
  const CutResult r = cut(movie(true), 11000);
  EXPECT_EQ(r.kind, CutResult::Kind::refused);
  EXPECT_EQ(r.error, "\"/m.mp4\" mp4 start time exceeds file duration");
}

TEST(Mp4Cut, TableLongerThanItsBox) {
  const CutResult r = cut(movie(true, 0x40000000), 1000);
  EXPECT_EQ(r.kind, CutResult::Kind::refused);
  EXPECT_EQ(r.error, "\"/m.mp4\" mp4 stts atom too small");
}

TEST(Mp4Cut, NoMdat) {
  Blob file = movie(true);
  file.resize(file.find("mdat") - 4);
  const CutResult r = cut(file, 1000);
  EXPECT_EQ(r.error, "no mp4 mdat atom was found in \"/m.mp4\"");
}

// Every prefix of the file and every byte changed: an answer or a
// refusal, and an answer's range inside the file.
TEST(Mp4Cut, DamagedFilesNeverReachOutside) {
  for (bool first : {true, false}) {
    const Blob file = movie(first);
    for (size_t n = 0; n <= file.size(); ++n) {
      const CutResult r = cut(file.substr(0, n), 2500, 3000);
      if (r.kind == CutResult::Kind::cut) {
        EXPECT_LE(uint64_t(r.data_offset + r.data_length), n);
      }
    }
    for (size_t i = 0; i < file.size(); ++i) {
      for (uint8_t v : {uint8_t(0), uint8_t(1), uint8_t(0x7f), uint8_t(0xff)}) {
        Blob bad = file;
        bad[i] = char(v);
        for (uint64_t start : {0u, 1500u, 5000u}) {
          const CutResult r = cut(bad, start, 2000, true);
          if (r.kind == CutResult::Kind::cut) {
            EXPECT_GE(r.data_offset, 0);
            EXPECT_LE(uint64_t(r.data_offset + r.data_length), bad.size());
          }
        }
      }
    }
  }
}

TEST(Mp4Box, Headers) {
  BoxHeader h;
  const uint8_t plain[] = {0, 0, 0, 16, 'f', 'r', 'e', 'e'};
  EXPECT_EQ(read_box_header(plain, 8, 16, h), HeaderStatus::ok);
  EXPECT_EQ(h.size, 16u);
  EXPECT_EQ(read_box_header(plain, 8, 15, h), HeaderStatus::too_large);
  EXPECT_EQ(read_box_header(plain, 3, 16, h), HeaderStatus::truncated);
  const uint8_t wide[] = {0, 0, 0, 1, 'm', 'd', 'a', 't', 0, 0, 0, 0, 0, 0, 0, 20};
  EXPECT_EQ(read_box_header(wide, 16, 20, h), HeaderStatus::ok);
  EXPECT_EQ(h.header_size, 16u);
  EXPECT_EQ(h.data_size(), 4u);
  EXPECT_EQ(read_box_header(wide, 8, 20, h), HeaderStatus::truncated);
  const uint8_t small[] = {0, 0, 0, 5, 'x', 'x', 'x', 'x'};
  EXPECT_EQ(read_box_header(small, 8, 8, h), HeaderStatus::too_small);
  const uint8_t zero[] = {0, 0, 0, 0, 'x', 'x', 'x', 'x'};
  EXPECT_EQ(read_box_header(zero, 8, 8, h), HeaderStatus::end);
}

}  // namespace
}  // namespace torii::mp4
