// An upstream group as the admin API changes it while torii runs. The
// loaded config stays immutable: each change makes a new snapshot (a copy
// of the group with the edited server list) and bumps a version number.
// Workers compare the version on each pick (one relaxed load) and switch
// to the new snapshot when it moved, so every worker serves from it at its
// next request; requests in flight keep the snapshot they started on.
// With `state FILE` each change is written to the file before it applies.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/upstream_config.h"
#include "core/result.h"
#include "dns/resolver.h"

namespace torii::upstream {

// What the API may set on a server; an unset field keeps its value.
struct ServerChange {
  std::optional<std::string> server;
  std::optional<unsigned> weight;
  std::optional<unsigned> max_conns;
  std::optional<unsigned> max_fails;
  std::optional<int64_t> fail_timeout_ms;
  std::optional<bool> backup;
  std::optional<bool> down;
  std::optional<bool> drain;
};

// Why an edit was refused, shaped for an HTTP answer.
struct EditError {
  int status = 400;
  std::string code;  // NGINX Plus's error codes: "UpstreamServerNotFound"...
  std::string text;
};

class LiveGroup {
 public:
  // `loaded` is the group as the config compiled it (live and stats
  // already set); the first snapshot is a copy of it.
  explicit LiveGroup(const config::UpstreamGroupConfig& loaded);

  // 0 until the first change: the config's own group is current.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  std::shared_ptr<const config::UpstreamGroupConfig> snapshot() const;

  // The server as it now is, or why nothing changed.
  struct Outcome {
    std::optional<EditError> error;
    config::UpstreamServer server;
  };
  Outcome add(const ServerChange& change);
  // A server made by resolving a name is refused (it follows its name).
  Outcome patch(unsigned id, const ServerChange& change);
  Outcome remove(unsigned id);

  // `server NAME resolve`: template `index` of the group now resolves to
  // `addrs` (none: the name does not exist). A server whose address stays
  // keeps its id, so its counters and its idle connections stay too; the
  // others go (requests in flight on them finish) and new addresses come
  // in as new servers. False when nothing changed: no new version.
  bool set_resolved(size_t index, const std::vector<dns::Address>& addrs);
  // After a reload, before any worker sees this group: each name starts
  // with the addresses it had in `old` (the previous config's group of the
  // same name, as the API or resolution left it), so nothing waits for a
  // new answer. False when `old` had none to give.
  bool adopt(const config::UpstreamGroupConfig& old);

 private:
  // Builds a server from its current values and `change`, validated as a
  // `server` line of the config would be.
  Outcome build(const config::UpstreamServer* base, const ServerChange& change,
                const config::UpstreamGroupConfig& group) const;
  // Publishes `next` (persisting it first when the group has a state file).
  std::optional<EditError> publish(std::shared_ptr<config::UpstreamGroupConfig> next);

  mutable std::mutex mu_;
  std::shared_ptr<const config::UpstreamGroupConfig> current_;  // guarded by mu_
  unsigned next_id_ = 0;                                        // guarded by mu_
  std::atomic<uint64_t> version_{0};
};

// The `server` line that describes `s` in a config or a state file
// (arguments only, without "server" and ";").
std::vector<std::string> server_line(const config::UpstreamServer& s);

// Gives a named upstream its LiveGroup and counters (the config has an
// `api` location); after its health verdicts are set up.
void attach_live_group(config::UpstreamGroupConfig& g);

}  // namespace torii::upstream
