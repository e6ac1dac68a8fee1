#include "core/allocator_tuning.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace torii::core {
namespace {

// Set, for the program run again, by the run that set GLIBC_TUNABLES.
constexpr const char* kTunedMark = "TORII_ALLOCATOR_TUNED";

void set_thresholds() {
  mallopt(M_MMAP_THRESHOLD, 8 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 32 * 1024 * 1024);
}

}  // namespace

void tune_allocator(char** argv) {
  if (std::getenv(kTunedMark)) {
    unsetenv(kTunedMark);  // the workers' children need not see it
    set_thresholds();
    return;
  }
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.")) return;
  // glibc reads the thread cache's size only from the environment, at
  // start: set it and run this program again, once.
  std::string value = tunables && *tunables ? std::string(tunables) + ":" : std::string();
  value += "glibc.malloc.tcache_count=" + std::to_string(kTcacheCount);
  if (argv && argv[0] && setenv("GLIBC_TUNABLES", value.c_str(), 1) == 0 && setenv(kTunedMark, "1", 1) == 0) {
    execv("/proc/self/exe", argv);
    // No /proc (or no exec): go on with the default cache size.
    unsetenv(kTunedMark);
    if (tunables) {
      setenv("GLIBC_TUNABLES", tunables, 1);
    } else {
      unsetenv("GLIBC_TUNABLES");
    }
  }
  set_thresholds();
}

}  // namespace torii::core
