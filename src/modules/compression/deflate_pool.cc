#include "modules/compression/deflate_pool.h"

#include "modules/compression/idle_pool.h"

namespace torii::compression {

namespace {

void destroy(Deflate* d) {
  deflateEnd(&d->z);
  delete d;
}

using Pool = IdlePool<Deflate, destroy>;

}  // namespace

void DeflateRelease::operator()(Deflate* d) const {
  if (deflateReset(&d->z) != Z_OK) {
    destroy(d);
    return;
  }
  Pool::give(d);
}

DeflateState take_deflate(int level, int wbits, int memlevel) {
  // The window and hash sizes are fixed when a state is made.
  if (Deflate* d = Pool::take([&](const Deflate& s) { return s.wbits == wbits && s.memlevel == memlevel; })) {
    // Right after a reset nothing is pending, so a new level needs no flush.
    if (deflateParams(&d->z, level, Z_DEFAULT_STRATEGY) == Z_OK) return DeflateState(d);
    destroy(d);
  }
  auto* d = new Deflate{};
  if (deflateInit2(&d->z, level, Z_DEFLATED, wbits + 16, memlevel, Z_DEFAULT_STRATEGY) != Z_OK) {
    delete d;
    return nullptr;
  }
  d->wbits = wbits;
  d->memlevel = memlevel;
  return DeflateState(d);
}

}  // namespace torii::compression
