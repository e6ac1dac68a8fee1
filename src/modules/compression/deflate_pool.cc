#include "modules/compression/deflate_pool.h"

#include <vector>

namespace torii::compression {

namespace {

// Enough for the responses one worker compresses at once; an idle state
// holds at most ~270 KB.
constexpr size_t kMaxIdle = 8;

void destroy(Deflate* d) {
  deflateEnd(&d->z);
  delete d;
}

// Set once this thread's pool is destroyed: a state released after that
// (an exchange torn down late in the thread's exit) is freed instead.
thread_local bool pool_gone = false;

struct Pool {
  std::vector<Deflate*> idle;
  ~Pool() {
    pool_gone = true;
    for (Deflate* d : idle) destroy(d);
  }
};

Pool& pool() {
  thread_local Pool p;
  return p;
}

}  // namespace

void DeflateRelease::operator()(Deflate* d) const {
  if (pool_gone || pool().idle.size() >= kMaxIdle || deflateReset(&d->z) != Z_OK) {
    destroy(d);
    return;
  }
  pool().idle.push_back(d);
}

DeflateState take_deflate(int level, int wbits, int memlevel) {
  if (!pool_gone) {
    auto& idle = pool().idle;
    for (size_t i = idle.size(); i-- > 0;) {
      Deflate* d = idle[i];
      if (d->wbits != wbits || d->memlevel != memlevel) continue;
      idle.erase(idle.begin() + long(i));
      // Right after a reset nothing is pending, so a new level needs no flush.
      if (deflateParams(&d->z, level, Z_DEFAULT_STRATEGY) == Z_OK) return DeflateState(d);
      destroy(d);
      break;
    }
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
