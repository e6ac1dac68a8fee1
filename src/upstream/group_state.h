// One worker's runtime state for an upstream group: the balancer's counters
// and each server's passive health (max_fails within fail_timeout takes it
// out until fail_timeout has passed). Per worker, so no locks: like nginx
// without a shared zone, each worker judges the servers on its own.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "config/upstream_config.h"
#include "upstream/peer_stats.h"

namespace torii::upstream {

// What a balancer may look at for one request.
struct PickInput {
  const sockaddr_storage* client = nullptr;  // ip_hash
  std::string_view hash_key;                 // hash KEY, rendered
};

class GroupState {
 public:
  explicit GroupState(const config::UpstreamGroupConfig& cfg);

  // A server for this try, never one flagged in `tried` (one flag per
  // server); -1 when none is available ("no live upstreams").
  int pick(const PickInput& in, const std::vector<uint8_t>& tried, int64_t now_ms);

  // Active connections (least_conn, random two, max_conns).
  void acquire(int peer) {
    ++peers_[size_t(peer)].conns;
    if (PeerStats* st = stats_of(peer)) {
      st->active.fetch_add(1, std::memory_order_relaxed);
      st->requests.fetch_add(1, std::memory_order_relaxed);
    }
  }
  void release(int peer) {
    auto& p = peers_[size_t(peer)];
    if (!p.conns) return;
    --p.conns;
    if (PeerStats* st = stats_of(peer)) st->active.fetch_sub(1, std::memory_order_relaxed);
  }
  // The server answered with this status (the admin API's responses counts).
  void responded(int peer, int status) {
    if (PeerStats* st = stats_of(peer); st && status >= 100 && status < 600)
      st->responses[status / 100 - 1].fetch_add(1, std::memory_order_relaxed);
  }
  void failed(int peer, int64_t now_ms);
  void succeeded(int peer);

  bool available(int peer, int64_t now_ms) const;
  size_t size() const { return peers_.size(); }
  unsigned conns(int peer) const { return peers_[size_t(peer)].conns; }
  unsigned fails(int peer) const { return peers_[size_t(peer)].fails; }

 private:
  struct Peer {
    int weight = 1;
    int effective_weight = 1;
    int current_weight = 0;
    unsigned conns = 0;
    unsigned fails = 0;
    int64_t checked_ms = 0;  // when the last failure happened
  };
  // The active check brought peer i back after `ms`.
  bool revived_since(int i, int64_t ms) const { return cfg_.health && cfg_.health->revived_ms(size_t(i)) > ms; }
  bool usable(int i, const std::vector<uint8_t>& tried, int64_t now_ms) const {
    return !tried[size_t(i)] && available(i, now_ms);
  }
  // Smooth weighted round robin among the usable servers of one tier
  // (primaries or backups); least_conn first narrows to the least loaded.
  int pick_rr(const std::vector<uint8_t>& tried, int64_t now_ms, bool backup, bool least_conn);
  int pick_weighted_hash(uint32_t hash, const std::vector<uint8_t>& tried, int64_t now_ms) const;
  int pick_hash(const PickInput& in, const std::vector<uint8_t>& tried, int64_t now_ms);
  int pick_ip_hash(const PickInput& in, const std::vector<uint8_t>& tried, int64_t now_ms);
  int pick_consistent(std::string_view key, const std::vector<uint8_t>& tried, int64_t now_ms);
  void build_ring();
  int pick_random(const std::vector<uint8_t>& tried, int64_t now_ms);
  uint64_t next_random();

  PeerStats* stats_of(int peer) const { return stats_.empty() ? nullptr : stats_[size_t(peer)]; }

  const config::UpstreamGroupConfig& cfg_;
  std::vector<Peer> peers_;
  std::vector<PeerStats*> stats_;  // by peer, with the admin API; else empty
  bool single_ = false;  // one server, no backups: never marked down (as nginx)
  int total_primary_weight_ = 0;
  int primaries_ = 0;  // servers that are not backups
  std::vector<std::pair<uint32_t, int>> ring_;  // consistent hash points -> peer
  uint64_t rng_;
};

// CRC-32 (IEEE), the hash nginx's hash and consistent hash balancers use.
uint32_t crc32(std::string_view data, uint32_t crc = 0);

}  // namespace torii::upstream
