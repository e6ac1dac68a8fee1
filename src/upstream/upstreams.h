// A worker's upstream state: for each group of the config (and of older
// configs still serving requests), its balancer state and its pool of idle
// connections. Reached through http::WorkerServices; never shared.
#pragma once

#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <unordered_set>

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

  // The TLS session to resume with a server, per client context (https
  // upstreams with proxy_ssl_session_reuse): one slot that every new
  // connection offers and every session the server issues replaces.
  std::shared_ptr<net::TlsSessionSlot> tls_session(const void* ctx, int peer) {
    auto& slot = tls_sessions[{ctx, peer}];
    if (!slot) slot = std::make_shared<net::TlsSessionSlot>();
    return slot;
  }
  std::map<std::pair<const void*, int>, std::shared_ptr<net::TlsSessionSlot>> tls_sessions;
};

class Upstreams {
 public:
  explicit Upstreams(core::EventLoop& loop) : loop_(loop) {}

  // The worker's config is now `cfg` (at start and on every reload). The
  // groups of older configs are retired: their idle connections move to
  // the group of the same name in `cfg` (those to a server it still has)
  // or are closed, so reloads never leave upstream connections behind.
  void use_config(const config::Config& cfg);

  std::shared_ptr<Group> group(const std::shared_ptr<const config::UpstreamGroupConfig>& cfg);
  // Drops the state of retired groups that no request uses any more.
  void prune();
  core::EventLoop& loop() { return loop_; }

 private:
  bool is_live(const config::UpstreamGroupConfig* cfg) const { return !has_live_ || live_.count(cfg) != 0; }
  void retire(Group& old);
  // Retires `old` with its idle connections handed to `next` (those to a
  // server it still has).
  void retire_into(Group& old, const std::shared_ptr<Group>& next);
  // The group of the admin API's current snapshot of `loaded`, or null
  // while the API has changed nothing.
  std::shared_ptr<Group> live_group(const std::shared_ptr<const config::UpstreamGroupConfig>& loaded);

  core::EventLoop& loop_;
  std::unordered_map<const config::UpstreamGroupConfig*, std::shared_ptr<Group>> groups_;
  // The groups of the current config, by name (unset before use_config()).
  bool has_live_ = false;
  std::unordered_set<const config::UpstreamGroupConfig*> live_;
  std::unordered_map<std::string, std::shared_ptr<const config::UpstreamGroupConfig>> live_by_name_;
  // For each loaded group the API changed: the snapshot version this
  // worker serves from, and its group.
  struct LiveSlot {
    uint64_t version = 0;
    std::shared_ptr<Group> group;
  };
  std::unordered_map<const config::UpstreamGroupConfig*, LiveSlot> live_slots_;
};

}  // namespace torii::upstream
