#include "upstream/upstreams.h"

namespace torii::upstream {

std::shared_ptr<Group> Upstreams::group(const std::shared_ptr<const config::UpstreamGroupConfig>& cfg) {
  auto it = groups_.find(cfg.get());
  if (it != groups_.end()) return it->second;
  auto g = std::make_shared<Group>(loop_, cfg);
  groups_.emplace(cfg.get(), g);
  return g;
}

void Upstreams::prune() {
  for (auto it = groups_.begin(); it != groups_.end();) {
    // Only this map holds the group and only the group holds its config:
    // the config was replaced by a reload and its last request is done.
    if (it->second.use_count() == 1 && it->second->cfg.use_count() == 1) {
      it = groups_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace torii::upstream
