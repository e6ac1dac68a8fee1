#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <string>

#include "modules/compression/deflate_pool.h"
#include "modules/compression/encoder.h"

namespace torii::compression {
namespace {

std::string sample_text() {
  std::string s;
  for (int i = 0; s.size() < 50000; ++i) s += "<p class=\"c" + std::to_string(i % 37) + "\">some words to compress</p>\n";
  return s;
}

// Compresses `in` whole through `d` (one deflate call with Z_FINISH).
std::string compress_with(Deflate& d, const std::string& in) {
  std::string out(deflateBound(&d.z, uLong(in.size())) + 64, '\0');
  d.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  d.z.avail_in = uInt(in.size());
  d.z.next_out = reinterpret_cast<Bytef*>(out.data());
  d.z.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&d.z, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - d.z.avail_out);
  return out;
}

std::string fresh_gzip(const std::string& in, int level) {
  Deflate fresh;
  EXPECT_EQ(deflateInit2(&fresh.z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out = compress_with(fresh, in);
  deflateEnd(&fresh.z);
  return out;
}

TEST(DeflatePool, AReleasedStateIsReusedForTheSameGeometry) {
  Deflate* first = nullptr;
  {
    auto d = take_deflate(5, 15, 8);
    ASSERT_NE(d, nullptr);
    first = d.get();
  }
  auto again = take_deflate(5, 15, 8);
  EXPECT_EQ(again.get(), first);
  auto other = take_deflate(5, 12, 5);  // another window: its own state
  EXPECT_NE(other.get(), first);
}

// A reused state, reset and given a new level, must write exactly what a
// new state at that level writes: no byte of the last stream, no old level.
TEST(DeflatePool, AReusedStateWritesWhatAFreshOneWrites) {
  const std::string text = sample_text();
  const std::string level1 = fresh_gzip(text, 1);
  const std::string level9 = fresh_gzip(text, 9);
  ASSERT_NE(level1, level9);
  for (int level : {1, 9, 1, 9}) {
    auto d = take_deflate(level, 15, 8);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(compress_with(*d, text), level == 1 ? level1 : level9) << "level " << level;
  }
}

std::string fresh_zstd(const std::string& in, int level) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(in.size()) + 64, '\0');
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  ZSTD_outBuffer output{out.data(), out.size(), 0};
  EXPECT_EQ(ZSTD_compressStream2(c, &output, &input, ZSTD_e_end), 0u);
  out.resize(output.pos);
  ZSTD_freeCCtx(c);
  return out;
}

// The same through the Encoder a response uses: a zstd context released by
// one response and taken by the next starts from its own parameters.
TEST(ZstdEncoder, AReusedContextWritesWhatAFreshOneWrites) {
  const std::string text = sample_text();
  const std::string level1 = fresh_zstd(text, 1);
  const std::string level19 = fresh_zstd(text, 19);
  ASSERT_NE(level1, level19);
  for (int level : {1, 19, 1, 19}) {
    auto enc = make_encoder(Coding::zstd, level, -1);
    std::string out;
    ASSERT_TRUE(enc->write(text, Encoder::Flush::finish, out));
    EXPECT_EQ(out, level == 1 ? level1 : level19) << "level " << level;
  }
}

}  // namespace
}  // namespace torii::compression
