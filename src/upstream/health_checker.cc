#include "upstream/health_checker.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "config/upstream_config.h"
#include "core/clock.h"
#include "log/error_log.h"
#include "upstream/health_probe.h"
#include "upstream/live_group.h"

namespace torii::upstream {

namespace {

bool same_address(const config::UpstreamServer& a, const config::UpstreamServer& b) {
  return a.addr_len == b.addr_len && std::memcmp(&a.addr, &b.addr, a.addr_len) == 0;
}

}  // namespace

bool HealthChecker::Verdict::record(bool passed, unsigned need_fails, unsigned need_passes) {
  if (passed) {
    fails = 0;
    if (up) return false;
    if (++passes < need_passes) return false;
    passes = 0;
    up = true;
    return true;
  }
  passes = 0;
  if (!up) return false;
  if (++fails < need_fails) return false;
  fails = 0;
  up = false;
  return true;
}

struct HealthChecker::Target {
  std::shared_ptr<const config::UpstreamGroupConfig> group;  // keeps the server, check and verdicts alive
  size_t index = 0;
  Verdict verdict;
  int64_t due_ms = 0;
  int64_t deadline_ms = 0;
  std::unique_ptr<HealthProbe> probe;

  const config::UpstreamServer& server() const { return group->servers[index]; }
  const config::HealthCheckConfig& check() const { return *group->health_check; }
};

HealthChecker::HealthChecker() {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

HealthChecker::~HealthChecker() {
  stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void HealthChecker::use_config(const std::shared_ptr<const config::Config>& cfg) {
  std::lock_guard lock(mu_);
  // Verdicts carry over now, on the caller's thread, so no worker ever
  // sees the new config with a fresh (all up) verdict for a dead server.
  if (pending_) {
    for (const auto& g : cfg->upstreams) {
      if (!g->health) continue;
      for (const auto& old : pending_->upstreams) {
        if (!old->health || old->name != g->name) continue;
        for (size_t i = 0; i < g->servers.size(); ++i)
          for (size_t j = 0; j < old->servers.size(); ++j)
            if (same_address(g->servers[i], old->servers[j])) g->health->set(i, old->health->up(j), 0);
      }
    }
  }
  pending_ = cfg;
  changed_ = true;
  bool any = std::any_of(cfg->upstreams.begin(), cfg->upstreams.end(), [](const auto& g) { return g->health != nullptr; });
  if (any && !thread_.joinable() && !stopping_) thread_ = std::thread([this] { run(); });
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof one);
}

void HealthChecker::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

void HealthChecker::run() {
  std::vector<Target> targets;
  std::vector<pollfd> fds;
  std::vector<Target*> polled;
  std::vector<std::pair<std::shared_ptr<LiveGroup>, uint64_t>> watched;  // groups the API may change
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      // The admin API changed a group's servers: probe its new list (the
      // snapshot carries each kept server's verdict).
      bool rebuild = changed_;
      for (const auto& [live, version] : watched)
        if (live->version() != version) rebuild = true;
      if (rebuild) {
        changed_ = false;
        // Probes of the old config are dropped; each server of the new one
        // starts from the verdict use_config() carried over.
        targets.clear();
        watched.clear();
        const int64_t now = core::monotonic_ms();
        for (const auto& loaded : pending_->upstreams) {
          if (!loaded->health) continue;
          auto g = loaded;
          if (loaded->live) {
            watched.emplace_back(loaded->live, loaded->live->version());
            if (watched.back().second != 0) g = loaded->live->snapshot();
          }
          if (!g->health) continue;
          for (size_t i = 0; i < g->servers.size(); ++i) {
            Target t;
            t.group = g;
            t.index = i;
            t.verdict.up = g->health->up(i);
            t.due_ms = now;
            targets.push_back(std::move(t));
          }
        }
      }
    }
    const int64_t now = core::monotonic_ms();
    for (auto& t : targets) {
      if (t.probe || t.due_ms > now) continue;
      // A server marked down in the config is not probed.
      if (t.server().down) {
        t.due_ms = now + t.check().interval.count();
        continue;
      }
      t.probe = std::make_unique<HealthProbe>(t.server(), t.check());
      t.deadline_ms = now + t.check().timeout.count();
    }
    for (auto& t : targets) {
      if (!t.probe) continue;
      if (!t.probe->done() && now >= t.deadline_ms) t.probe->time_out();
      if (!t.probe->done()) continue;
      const bool passed = t.probe->state() == HealthProbe::State::passed;
      const auto& c = t.check();
      if (t.verdict.record(passed, c.fails, c.passes)) {
        t.group->health->set(t.index, t.verdict.up, core::monotonic_ms());
        if (t.verdict.up) {
          TORII_LOG(notice, "upstream server %s of \"%s\" is healthy again", t.server().name.c_str(),
                    t.group->name.c_str());
        } else {
          TORII_LOG(warn, "upstream server %s of \"%s\" is unhealthy: %s while checking \"%s\"",
                    t.server().name.c_str(), t.group->name.c_str(), t.probe->reason().c_str(), c.uri.c_str());
        }
      }
      t.probe.reset();
      // The next probe is due one interval after this one started.
      t.due_ms = t.deadline_ms - c.timeout.count() + c.interval.count();
      if (t.due_ms <= now) t.due_ms = now + 1;
    }
    // Wait for a probe's socket, its deadline, the next due probe, or a wake-up.
    fds.clear();
    polled.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    int64_t next = now + 60'000;
    for (auto& t : targets) {
      if (t.probe) {
        fds.push_back({t.probe->fd(), t.probe->events(), 0});
        polled.push_back(&t);
        next = std::min(next, t.deadline_ms);
      } else {
        next = std::min(next, t.due_ms);
      }
    }
    const int wait = int(std::clamp<int64_t>(next - now, 0, 60'000));
    int n = ::poll(fds.data(), fds.size(), wait);
    if (n <= 0) continue;
    if (fds[0].revents) {
      uint64_t v;
      (void)!::read(wake_fd_, &v, sizeof v);
    }
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents) polled[i - 1]->probe->on_ready();
  }
}

}  // namespace torii::upstream
