// Idle zlib deflate states kept per thread for reuse.
//
// A deflate state owns about 4 x 2^(memlevel+7) bytes of window, hash and
// pending buffers (256 KB at the default settings). Made and freed for every
// response, that memory is faulted in, zeroed and handed back to the kernel
// each time: measured on a proxied 20 KB page, the page faults, the heap
// trim's madvise and the TLB shootdowns it sends to the other worker threads
// cost more than the compression itself. deflateReset keeps the buffers.
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
