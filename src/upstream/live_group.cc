#include "upstream/live_group.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "config/directives.h"
#include "log/error_log.h"
#include "upstream/peer_stats.h"

namespace torii::upstream {

namespace {

EditError error(int status, std::string code, std::string text) { return EditError{status, std::move(code), std::move(text)}; }

// Writes the group's server lines to its state file: a temporary file
// renamed over it, so a crash never leaves half a list.
std::optional<EditError> write_state(const config::UpstreamGroupConfig& g) {
  std::string text;
  for (const auto& s : g.servers) {
    text += "server";
    for (const auto& a : server_line(s)) text += " " + a;
    text += ";\n";
  }
  const std::string tmp = g.state_file + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  for (size_t off = 0; ok && off < text.size();) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += size_t(n);
  }
  const int saved = errno;
  if (fd >= 0 && ::close(fd) != 0) ok = false;
  if (ok && ::rename(tmp.c_str(), g.state_file.c_str()) != 0) ok = false;
  if (ok) return std::nullopt;
  const std::string why = std::strerror(errno ? errno : saved);
  ::unlink(tmp.c_str());
  TORII_LOG(error, "writing the state file \"%s\" of upstream \"%s\" failed: %s", g.state_file.c_str(),
            g.name.c_str(), why.c_str());
  return error(500, "StateFileError", "the state file could not be written: " + why);
}

bool tier_allows_backup(const config::UpstreamGroupConfig& g) {
  using B = config::UpstreamGroupConfig::Balancer;
  return g.balancer == B::round_robin || g.balancer == B::least_conn;
}

}  // namespace

std::vector<std::string> server_line(const config::UpstreamServer& s) {
  std::vector<std::string> a{s.name};
  a.push_back("weight=" + std::to_string(s.weight));
  a.push_back("max_fails=" + std::to_string(s.max_fails));
  a.push_back("fail_timeout=" + std::to_string(s.fail_timeout.count()) + "ms");
  a.push_back("max_conns=" + std::to_string(s.max_conns));
  if (s.backup) a.emplace_back("backup");
  if (s.down) a.emplace_back("down");
  if (s.drain) a.emplace_back("drain");
  return a;
}

void attach_live_group(config::UpstreamGroupConfig& g) {
  if (g.implicit) return;
  g.stats = std::make_shared<PeerStatsTable>();
  g.live = std::make_shared<LiveGroup>(g);
}

LiveGroup::LiveGroup(const config::UpstreamGroupConfig& loaded) {
  auto first = std::make_shared<config::UpstreamGroupConfig>(loaded);
  first->live.reset();  // a snapshot never points back here: no cycle
  current_ = std::move(first);
  for (const auto& s : loaded.servers) next_id_ = std::max(next_id_, s.id + 1);
}

std::shared_ptr<const config::UpstreamGroupConfig> LiveGroup::snapshot() const {
  std::lock_guard lock(mu_);
  return current_;
}

LiveGroup::Outcome LiveGroup::build(const config::UpstreamServer* base, const ServerChange& change,
                                    const config::UpstreamGroupConfig& group) const {
  config::UpstreamServer from = base ? *base : config::UpstreamServer{};
  if (change.server) from.name = *change.server;
  if (change.weight) from.weight = *change.weight;
  if (change.max_conns) from.max_conns = *change.max_conns;
  if (change.max_fails) from.max_fails = *change.max_fails;
  if (change.fail_timeout_ms) from.fail_timeout = config::Ms(*change.fail_timeout_ms);
  if (change.backup) from.backup = *change.backup;
  if (change.down) from.down = *change.down;
  if (change.drain) from.drain = *change.drain;
  if (from.name.empty()) return {error(400, "UpstreamConfFormatError", "\"server\" is required"), {}};
  if (from.backup && !tier_allows_backup(group))
    return {error(400, "UpstreamBadBackup", "backup servers are not allowed with this load balancing method"), {}};
  // Validated and resolved exactly as the same line in the config would be.
  config::Node line;
  line.name = "server";
  line.args = server_line(from);
  line.file = std::make_shared<const std::string>("api");
  config::UpstreamGroupConfig scratch;
  auto st = config::upstream_server(scratch, line);
  if (!st) {
    std::string text = st.error();
    const std::string where = line.where();
    if (text.compare(0, where.size(), where) == 0) text.erase(0, where.size());
    return {error(400, "UpstreamConfFormatError", text), {}};
  }
  if (scratch.servers.size() != 1)
    return {error(400, "UpstreamConfFormatError", "\"" + from.name + "\" names several addresses; give one"), {}};
  config::UpstreamServer out = scratch.servers[0];
  out.id = from.id;
  if (!change.server && base) out.name = base->name;  // as first written, not as resolved
  return {std::nullopt, out};
}

std::optional<EditError> LiveGroup::publish(std::shared_ptr<config::UpstreamGroupConfig> next) {
  if (next->health_check) {
    // Verdicts follow their server (by id); a new server starts up, as
    // every server does when torii starts, until its probes say otherwise.
    auto health = std::make_shared<config::PeerHealth>(next->servers.size());
    for (size_t i = 0; i < next->servers.size(); ++i)
      for (size_t j = 0; j < current_->servers.size(); ++j)
        if (current_->servers[j].id == next->servers[i].id && current_->health)
          health->set(i, current_->health->up(j), current_->health->revived_ms(j));
    next->health = std::move(health);
  }
  if (!next->state_file.empty()) {
    if (auto e = write_state(*next)) return e;
  }
  current_ = std::move(next);
  version_.fetch_add(1, std::memory_order_release);
  return std::nullopt;
}

LiveGroup::Outcome LiveGroup::add(const ServerChange& change) {
  std::lock_guard lock(mu_);
  auto out = build(nullptr, change, *current_);
  if (out.error) return out;
  if (!change.server) return {error(400, "UpstreamConfFormatError", "\"server\" is required"), {}};
  out.server.id = next_id_;
  auto next = std::make_shared<config::UpstreamGroupConfig>(*current_);
  next->servers.push_back(out.server);
  if (auto e = publish(std::move(next))) return {e, {}};
  ++next_id_;
  return out;
}

LiveGroup::Outcome LiveGroup::patch(unsigned id, const ServerChange& change) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<config::UpstreamGroupConfig>(*current_);
  auto it = std::find_if(next->servers.begin(), next->servers.end(), [&](const auto& s) { return s.id == id; });
  if (it == next->servers.end()) return {error(404, "UpstreamServerNotFound", "server not found"), {}};
  auto out = build(&*it, change, *current_);
  if (out.error) return out;
  *it = out.server;
  if (auto e = publish(std::move(next))) return {e, {}};
  return out;
}

LiveGroup::Outcome LiveGroup::remove(unsigned id) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<config::UpstreamGroupConfig>(*current_);
  auto it = std::find_if(next->servers.begin(), next->servers.end(), [&](const auto& s) { return s.id == id; });
  if (it == next->servers.end()) return {error(404, "UpstreamServerNotFound", "server not found"), {}};
  Outcome out{std::nullopt, *it};
  next->servers.erase(it);
  if (auto e = publish(std::move(next))) return {e, {}};
  return out;
}

}  // namespace torii::upstream
