#include "core/worker_placement.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "log/error_log.h"

namespace torii::core {

void place_worker_thread(const config::ProcessSettings& settings, int index) {
  if (auto cpus = settings.cpus_for_worker(index)) {
    const int rc = pthread_setaffinity_np(pthread_self(), sizeof *cpus, &*cpus);
    if (rc != 0) TORII_LOG(alert, "sched_setaffinity() failed (%d: %s)", rc, strerror(rc));
  }
  // The priority is the thread's own: setpriority() on its thread id.
  // Without worker_priority a worker takes the main thread's, which torii
  // never changes (a reload that drops the directive goes back to it).
  const id_t tid = static_cast<id_t>(gettid());
  errno = 0;
  const int wanted = settings.priority != 0 ? settings.priority : getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
  const int now = getpriority(PRIO_PROCESS, tid);
  if (errno == 0 && now != wanted && setpriority(PRIO_PROCESS, tid, wanted) != 0)
    TORII_LOG(alert, "setpriority(%d) failed (%d: %s)", wanted, errno, strerror(errno));
}

}  // namespace torii::core
