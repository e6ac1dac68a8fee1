// zlib deflate states kept per thread for reuse (see idle_pool.h for why).
#pragma once

#include <zlib.h>

#include <memory>

namespace torii::compression {

struct Deflate {
  z_stream z{};  // zlib's state points back at this: it never moves
  int wbits = 0;
  int memlevel = 0;
};

struct DeflateRelease {
  void operator()(Deflate* d) const;  // back to this thread's pool, or freed
};
using DeflateState = std::unique_ptr<Deflate, DeflateRelease>;

// A state ready for a new gzip stream (windowBits wbits + 16) at `level`;
// null if zlib could not make one.
DeflateState take_deflate(int level, int wbits, int memlevel);

}  // namespace torii::compression
