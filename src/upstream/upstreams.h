// A worker's upstream state: for each group of the config (and of older
// configs still serving requests), its balancer state and its pool of idle
// connections. Reached through http::WorkerServices; never shared.
#pragma once

#include <memory>
#include <unordered_map>

#include "config/upstream_config.h"
#include "core/event_loop.h"
#include "upstream/group_state.h"
#include "upstream/keepalive_pool.h"

namespace torii::upstream {

struct Group {
  Group(core::EventLoop& loop, std::shared_ptr<const config::UpstreamGroupConfig> c)
      : cfg(std::move(c)), state(*cfg), pool(loop, *cfg) {}
  std::shared_ptr<const config::UpstreamGroupConfig> cfg;  // keeps the config (and its address) alive
  GroupState state;
  KeepalivePool pool;
};

class Upstreams {
 public:
  explicit Upstreams(core::EventLoop& loop) : loop_(loop) {}

  std::shared_ptr<Group> group(const std::shared_ptr<const config::UpstreamGroupConfig>& cfg);
  // Drops the state of groups that no config and no request uses any more.
  void prune();
  core::EventLoop& loop() { return loop_; }

 private:
  core::EventLoop& loop_;
  std::unordered_map<const config::UpstreamGroupConfig*, std::shared_ptr<Group>> groups_;
};

}  // namespace torii::upstream
