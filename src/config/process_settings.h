// Main-context directives that shape the worker threads and the process
// they live in (directives_process.cc sets them; core/worker_placement.cc
// and main.cc apply them).
#pragma once

#include <sched.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace torii::config {

struct ProcessSettings {
  // worker_cpu_affinity: mask i pins worker i, the last mask the workers
  // past the list. With `auto`, worker i gets the i-th CPU of the one mask
  // (every CPU when none is given), wrapping around.
  std::vector<cpu_set_t> cpu_masks;
  bool cpu_auto = false;
  // worker_priority: the nice value of the worker threads (0: left as is).
  int priority = 0;
  // worker_rlimit_core: RLIMIT_CORE of the process; -1: left as is.
  int64_t rlimit_core = -1;
  // working_directory: the process's current directory once it runs
  // (where a core dump lands); empty: left as is.
  std::string working_directory;

  // The CPUs worker `index` is pinned to, if any.
  std::optional<cpu_set_t> cpus_for_worker(int index) const;
};

}  // namespace torii::config
