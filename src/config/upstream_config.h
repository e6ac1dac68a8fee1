// An upstream {} block (or the implicit group a proxy_pass to a plain
// address makes): its servers and how to pick among them. Immutable; each
// worker keeps its own runtime state (health, counters, idle connections)
// for it in upstream::Upstreams.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/health_check_config.h"
#include "config/template.h"

namespace torii::upstream {
class LiveGroup;
class PeerStatsTable;
}  // namespace torii::upstream

namespace torii::config {

struct UpstreamServer {
  std::string name;  // as written ("127.0.0.1:8080", "app:80", "unix:/x"): $upstream_addr
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  unsigned weight = 1;
  unsigned max_fails = 1;  // 0: never marked down
  Ms fail_timeout{10'000};
  unsigned max_conns = 0;  // 0: unlimited (per worker, as nginx without a zone)
  bool backup = false;
  bool down = false;
  bool drain = false;  // takes no new requests; those in flight finish
  unsigned id = 0;     // the admin API's handle: its index at load, new ones after
  // Made by resolving a `server NAME resolve` line: the index of its
  // ResolveTemplate in the group, and that line's name ("app.internal:8080");
  // -1 and empty for the servers of the config and the admin API.
  int resolve_index = -1;
  std::string host;
  // The `server` line's address as written ("127.0.0.1", "cache1:11211"),
  // which nginx's consistent hash builds its points from; empty: `name`.
  std::string written;
};

// `server NAME resolve` (a zone is required): the line's settings with the
// port in `proto.addr`; the addresses come at run time, re-resolved as
// their TTL (or the resolver's valid=) runs out (upstream/name_refresher).
struct ResolveTemplate {
  UpstreamServer proto;
  std::string name;     // the host name to ask for
  std::string written;  // as written, port included: the servers' `host`
  uint16_t port = 80;
};

struct UpstreamGroupConfig {
  enum class Balancer : uint8_t { round_robin, least_conn, ip_hash, hash, random };

  std::string name;  // the block's name, or "host:port" for an implicit group
  std::string file;
  int line = 0;
  bool implicit = false;  // made by proxy_pass from an address, not a block
  std::vector<UpstreamServer> servers;  // primaries and backups, in file order
  Balancer balancer = Balancer::round_robin;
  Template hash_key;     // hash KEY
  bool consistent = false;  // hash ... consistent (ketama-style ring)
  bool random_two = false;  // random two: the less loaded of two
  unsigned keepalive = 0;   // idle connections cached per worker; 0: none
  Ms keepalive_timeout{60'000};
  uint64_t keepalive_requests = 1000;
  Ms keepalive_time{3'600'000};  // a connection serves no request that ends after this age
  // health_check: set when the block has one; `health` holds the prober's
  // verdicts (one per server) for as long as this config lives.
  std::shared_ptr<const HealthCheckConfig> health_check;
  std::shared_ptr<PeerHealth> health;
  // With an `api` location in the config: the servers as the admin API
  // changed them (upstream/live_group), and each server's counters.
  std::string state_file;  // `state FILE`: the servers persist there
  std::shared_ptr<upstream::LiveGroup> live;
  std::shared_ptr<upstream::PeerStatsTable> stats;
  bool zone = false;  // `zone NAME [SIZE]`: nginx requires it to resolve at run time
  // `server ... resolve` lines, and the resolver that re-resolves them (the
  // block's `resolver`, else the http block's); `servers` starts without them.
  std::vector<ResolveTemplate> resolves;
  std::shared_ptr<const dns::ResolverConfig> resolver;
  Ms resolver_timeout{0};  // 0: the http block's resolver_timeout
};

}  // namespace torii::config
