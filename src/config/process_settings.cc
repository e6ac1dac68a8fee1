#include "config/process_settings.h"

#include <algorithm>

namespace torii::config {

std::optional<cpu_set_t> ProcessSettings::cpus_for_worker(int index) const {
  if (cpu_masks.empty()) return std::nullopt;
  if (!cpu_auto) return cpu_masks[std::min<size_t>(static_cast<size_t>(index), cpu_masks.size() - 1)];
  const cpu_set_t& allowed = cpu_masks.back();
  const int count = CPU_COUNT(&allowed);
  if (count == 0) return std::nullopt;
  int wanted = index % count;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || wanted-- > 0) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return one;
  }
  return std::nullopt;
}

}  // namespace torii::config
