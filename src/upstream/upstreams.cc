#include "upstream/upstreams.h"

#include <cstring>
#include <vector>

#include "upstream/live_group.h"

namespace torii::upstream {

namespace {

bool same_address(const config::UpstreamServer& a, const config::UpstreamServer& b) {
  return a.addr_len == b.addr_len && std::memcmp(&a.addr, &b.addr, a.addr_len) == 0;
}

// For each server of `from`, the index of the server with the same address
// in `to` (-1: none, or down there).
std::vector<int> map_peers(const config::UpstreamGroupConfig& from, const config::UpstreamGroupConfig& to) {
  std::vector<int> map(from.servers.size(), -1);
  for (size_t i = 0; i < from.servers.size(); ++i) {
    for (size_t j = 0; j < to.servers.size(); ++j) {
      if (!to.servers[j].down && same_address(from.servers[i], to.servers[j])) {
        map[i] = int(j);
        break;
      }
    }
  }
  return map;
}

}  // namespace

void Upstreams::use_config(const config::Config& cfg) {
  has_live_ = true;
  live_.clear();
  live_slots_.clear();  // a reload starts from the config's servers again
  live_by_name_.clear();
  for (const auto& u : cfg.upstreams) {
    live_.insert(u.get());
    live_by_name_[u->name] = u;
  }
  std::vector<std::shared_ptr<Group>> old;
  for (const auto& [key, g] : groups_)
    if (!is_live(key) && !g->pool.retired()) old.push_back(g);
  for (const auto& g : old) retire(*g);
}

void Upstreams::retire(Group& old) {
  auto next = live_by_name_.find(old.cfg->name);
  // The same upstream in the new config: its pool takes the connections.
  retire_into(old, next != live_by_name_.end() ? group(next->second) : nullptr);
}

void Upstreams::retire_into(Group& old, const std::shared_ptr<Group>& next) {
  KeepalivePool::Forward forward;
  if (next && next->cfg->keepalive > 0) {
    std::weak_ptr<Group> successor = next;
    forward = [successor, peers = map_peers(*old.cfg, *next->cfg)](KeptConnection& conn, int peer) {
      auto s = successor.lock();
      if (!s || peer < 0 || size_t(peer) >= peers.size() || peers[size_t(peer)] < 0) return false;
      s->pool.put(std::move(conn), peers[size_t(peer)]);  // retired too by now: it hands them on again
      return true;
    };
  }
  old.pool.retire(std::move(forward));
}

std::shared_ptr<Group> Upstreams::live_group(const std::shared_ptr<const config::UpstreamGroupConfig>& loaded) {
  const uint64_t version = loaded->live->version();
  if (version == 0 || !is_live(loaded.get())) return nullptr;
  LiveSlot& slot = live_slots_[loaded.get()];
  if (slot.group && slot.version == version) return slot.group;
  // The API changed the group since this worker last looked: serve from
  // the new snapshot; the previous one's idle connections move over.
  auto snap = loaded->live->snapshot();
  auto next = std::make_shared<Group>(loop_, snap);
  groups_.emplace(snap.get(), next);
  live_.insert(snap.get());
  std::shared_ptr<Group> prev = slot.group;
  if (!prev) {
    auto it = groups_.find(loaded.get());
    if (it != groups_.end()) prev = it->second;
  }
  if (slot.group) live_.erase(slot.group->cfg.get());  // an older snapshot (the loaded group stays known)
  if (prev) retire_into(*prev, next);
  slot = {version, next};
  return next;
}

std::shared_ptr<Group> Upstreams::group(const std::shared_ptr<const config::UpstreamGroupConfig>& cfg) {
  if (cfg->live) {
    if (auto g = live_group(cfg)) return g;
  }
  auto it = groups_.find(cfg.get());
  if (it != groups_.end()) return it->second;
  auto g = std::make_shared<Group>(loop_, cfg);
  groups_.emplace(cfg.get(), g);
  // A request that began on a replaced config: it may use the group, but
  // what it leaves goes on to the current config's pool.
  if (!is_live(cfg.get())) retire(*g);
  return g;
}

void Upstreams::prune() {
  for (auto it = groups_.begin(); it != groups_.end();) {
    // Only this map holds the group: no request uses it. A retired group
    // holds no connection; the config it keeps alive can go.
    const bool replaced = it->second->pool.retired() || it->second->cfg.use_count() == 1;
    if (it->second.use_count() == 1 && replaced) {
      it = groups_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace torii::upstream
