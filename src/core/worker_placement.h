// worker_cpu_affinity and worker_priority for the calling worker thread:
// Linux keeps both per thread, so each worker applies its own, at start
// and again when a reload brings new values.
#pragma once

#include "config/process_settings.h"

namespace torii::core {

void place_worker_thread(const config::ProcessSettings& settings, int index);

}  // namespace torii::core
