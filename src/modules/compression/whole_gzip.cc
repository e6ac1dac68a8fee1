#include "modules/compression/whole_gzip.h"

#include <libdeflate.h>

#include <algorithm>
#include <array>

namespace torii::compression {

namespace {

// A compressor holds its match finder's tables (up to a few hundred KB);
// each thread keeps one per level it has used.
struct Compressors {
  std::array<libdeflate_compressor*, 13> by_level{};
  ~Compressors() {
    for (auto* c : by_level)
      if (c) libdeflate_free_compressor(c);
  }
};

libdeflate_compressor* compressor(int level) {
  thread_local Compressors cs;
  level = std::clamp(level, 1, 12);
  auto*& c = cs.by_level[size_t(level)];
  if (!c) c = libdeflate_alloc_compressor(level);
  return c;
}

}  // namespace

bool gzip_whole(int level, std::string_view in, std::string& out) {
  libdeflate_compressor* c = compressor(level);
  if (!c) return false;
  const size_t before = out.size();
  out.resize(before + libdeflate_gzip_compress_bound(c, in.size()));
  const size_t n = libdeflate_gzip_compress(c, in.data(), in.size(), out.data() + before, out.size() - before);
  out.resize(before + n);
  return n != 0;
}

}  // namespace torii::compression
