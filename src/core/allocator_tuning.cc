#include "core/allocator_tuning.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace torii::core {

void tune_allocator() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.")) return;
  mallopt(M_MMAP_THRESHOLD, 8 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 32 * 1024 * 1024);
}

}  // namespace torii::core
