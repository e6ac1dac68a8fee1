#include "upstream/live_group.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "config/directives.h"
#include "log/error_log.h"
#include "net/address.h"
#include "upstream/peer_stats.h"

namespace torii::upstream {

namespace {

EditError error(int status, std::string code, std::string text) { return EditError{status, std::move(code), std::move(text)}; }

// Writes the group's server lines to its state file: a temporary file
// renamed over it, so a crash never leaves half a list.
std::optional<EditError> write_state(const config::UpstreamGroupConfig& g) {
  std::string text;
  for (const auto& s : g.servers) {
    if (s.resolve_index >= 0) continue;  // never in a state file's group; its name's, not a server of its own
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

EditError resolved_error(const config::UpstreamServer& s) {
  return error(400, "UpstreamServerImmutable",
               "the server is an address of \"" + s.host + "\", resolved at run time; it changes with its name");
}

bool same_address(const sockaddr_storage& a, socklen_t a_len, const sockaddr_storage& b, socklen_t b_len) {
  return a_len == b_len && std::memcmp(&a, &b, a_len) == 0;
}

// The server template `index` makes for `addr` (the template's port).
config::UpstreamServer resolved_server(const config::UpstreamGroupConfig& g, size_t index,
                                       const sockaddr_storage& addr, socklen_t len) {
  const config::ResolveTemplate& t = g.resolves[index];
  config::UpstreamServer s = t.proto;
  s.addr = addr;
  s.addr_len = len;
  if (addr.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&s.addr)->sin_port = htons(t.port);
  if (addr.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&s.addr)->sin6_port = htons(t.port);
  s.name = net::address_with_port(s.addr);
  s.host = t.written;
  s.written = t.written;
  s.resolve_index = int(index);
  return s;
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
  if (it->resolve_index >= 0) return {resolved_error(*it), {}};
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
  if (it->resolve_index >= 0) return {resolved_error(*it), {}};
  Outcome out{std::nullopt, *it};
  next->servers.erase(it);
  if (auto e = publish(std::move(next))) return {e, {}};
  return out;
}

bool LiveGroup::set_resolved(size_t index, const std::vector<dns::Address>& addrs) {
  std::lock_guard lock(mu_);
  if (index >= current_->resolves.size()) return false;
  // The addresses this template has now, and which of them stay.
  std::vector<config::UpstreamServer> added;
  std::vector<bool> kept(addrs.size(), false);
  bool removed = false;
  for (const auto& s : current_->servers) {
    if (s.resolve_index != int(index)) continue;
    bool stays = false;
    for (size_t i = 0; i < addrs.size() && !stays; ++i) {
      config::UpstreamServer want = resolved_server(*current_, index, addrs[i].addr, addrs[i].len);
      if (!kept[i] && same_address(s.addr, s.addr_len, want.addr, want.addr_len)) stays = kept[i] = true;
    }
    removed = removed || !stays;
  }
  for (size_t i = 0; i < addrs.size(); ++i) {
    if (kept[i]) continue;
    config::UpstreamServer s = resolved_server(*current_, index, addrs[i].addr, addrs[i].len);
    // The same address twice in one answer makes one server.
    bool dup = std::any_of(added.begin(), added.end(),
                           [&](const auto& a) { return same_address(a.addr, a.addr_len, s.addr, s.addr_len); });
    if (!dup) added.push_back(std::move(s));
  }
  if (!removed && added.empty()) return false;
  auto next = std::make_shared<config::UpstreamGroupConfig>(*current_);
  std::erase_if(next->servers, [&](const config::UpstreamServer& s) {
    if (s.resolve_index != int(index)) return false;
    return std::none_of(addrs.begin(), addrs.end(), [&](const dns::Address& a) {
      config::UpstreamServer want = resolved_server(*current_, index, a.addr, a.len);
      return same_address(s.addr, s.addr_len, want.addr, want.addr_len);
    });
  });
  for (auto& s : added) {
    s.id = next_id_++;
    next->servers.push_back(std::move(s));
  }
  return !publish(std::move(next)).has_value();
}

bool LiveGroup::adopt(const config::UpstreamGroupConfig& old) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<config::UpstreamGroupConfig>(*current_);
  bool any = false;
  for (size_t i = 0; i < next->resolves.size(); ++i) {
    // The first of the old group's names that is this one (nginx's order);
    // the port and the settings are the new line's.
    for (size_t j = 0; j < old.resolves.size(); ++j) {
      if (old.resolves[j].name != next->resolves[i].name) continue;
      for (const auto& s : old.servers) {
        if (s.resolve_index != int(j)) continue;
        config::UpstreamServer c = resolved_server(*next, i, s.addr, s.addr_len);
        c.id = next_id_++;
        next->servers.push_back(std::move(c));
        any = true;
      }
      break;
    }
  }
  if (!any) return false;
  return !publish(std::move(next)).has_value();
}

}  // namespace torii::upstream
