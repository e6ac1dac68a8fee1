#include "upstream/name_refresher.h"

#include <algorithm>

#include "config/upstream_config.h"
#include "core/event_loop.h"
#include "dns/resolver.h"
#include "log/error_log.h"
#include "upstream/live_group.h"

namespace torii::upstream {

namespace {

// nginx asks again a second after the answer runs out.
constexpr int64_t kAfterExpiryMs = 1000;
// How long "Host not found" stands without valid= (nginx's resolver).
constexpr int64_t kNotFoundValidMs = 10'000;

bool has_names(const config::Config& cfg) {
  return std::any_of(cfg.upstreams.begin(), cfg.upstreams.end(),
                     [](const auto& g) { return !g->resolves.empty() && g->live && g->resolver; });
}

}  // namespace

struct NameRefresher::State {
  explicit State(core::EventLoop& l) : loop(l), resolvers(l) {}
  core::EventLoop& loop;
  dns::Resolvers resolvers;
  std::vector<std::unique_ptr<Name>> names;
};

// One `server NAME resolve` line of one group: asked for when its answer
// runs out, its servers set from each answer.
struct NameRefresher::Name {
  Name(State& s, std::shared_ptr<const config::UpstreamGroupConfig> g, size_t i)
      : state(s), group(std::move(g)), index(i), timer(&on_timer, this) {}
  ~Name() { state.loop.cancel(timer); }

  static void on_timer(void* self) { static_cast<Name*>(self)->ask(); }

  void ask() {
    const auto& t = group->resolves[index];
    // The previous wait (if any) is over: replacing it here, never inside
    // its own callback.
    lookup = state.resolvers.get(*group->resolver)
                 .resolve(t.name, group->resolver_timeout.count(), [this](const dns::Answer& a) { answered(a); });
  }

  void answered(const dns::Answer& a) {
    const auto& t = group->resolves[index];
    const int64_t now = state.loop.now_ms();
    int64_t again_ms = 0;
    if (a.state == 0) {
      if (group->live->set_resolved(index, a.addrs))
        TORII_LOG(info, "upstream \"%s\": \"%s\" now resolves to %zu address(es)", group->name.c_str(),
                  t.name.c_str(), a.addrs.size());
      again_ms = std::max<int64_t>(a.expires_ms - now, 0) + kAfterExpiryMs;
    } else if (a.state == 3) {
      // The name (or its records) is gone: so are its servers.
      TORII_LOG(error, "%s could not be resolved (3: %s)", t.name.c_str(), dns::state_text(a.state));
      group->live->set_resolved(index, {});
      const int64_t valid = group->resolver->valid.count();
      again_ms = (valid > 0 ? valid : kNotFoundValidMs) + kAfterExpiryMs;
    } else {
      // No answer worth acting on: the last addresses stay.
      TORII_LOG(error, "%s could not be resolved (%d: %s)", t.name.c_str(), a.state, dns::state_text(a.state));
      again_ms = std::max<int64_t>(group->resolver_timeout.count(), 1000);
    }
    state.loop.arm(timer, again_ms);
  }

  State& state;
  std::shared_ptr<const config::UpstreamGroupConfig> group;  // the loaded group: its lines and its LiveGroup
  size_t index;
  core::Timer timer;
  std::shared_ptr<dns::Lookup> lookup;
};

NameRefresher::NameRefresher() = default;

NameRefresher::~NameRefresher() { stop(); }

void NameRefresher::use_config(const std::shared_ptr<const config::Config>& cfg) {
  std::lock_guard lock(mu_);
  if (current_) {
    for (const auto& g : cfg->upstreams) {
      if (g->resolves.empty() || !g->live) continue;
      for (const auto& old : current_->upstreams) {
        if (old->implicit || old->name != g->name) continue;
        auto snap = old->live ? old->live->snapshot() : old;
        g->live->adopt(*snap);
        break;
      }
    }
  }
  current_ = cfg;
  if (!loop_ && !has_names(*cfg)) return;
  if (!loop_) {
    loop_ = std::make_unique<core::EventLoop>();
    state_ = std::make_unique<State>(*loop_);
    thread_ = std::thread([this] { loop_->run(); });
  }
  loop_->post([this, cfg] { watch(cfg); });
}

void NameRefresher::watch(const std::shared_ptr<const config::Config>& cfg) {
  state_->names.clear();  // their timers and waits end with them
  for (const auto& g : cfg->upstreams) {
    if (g->resolves.empty() || !g->live || !g->resolver) continue;
    for (size_t i = 0; i < g->resolves.size(); ++i) {
      state_->names.push_back(std::make_unique<Name>(*state_, g, i));
      state_->names.back()->ask();
    }
  }
}

void NameRefresher::stop() {
  std::lock_guard lock(mu_);
  if (!loop_) return;
  loop_->post([this] {
    state_->names.clear();
    loop_->stop();
  });
  thread_.join();
  state_.reset();  // the resolvers close their sockets while the loop still exists
  loop_.reset();
}

}  // namespace torii::upstream
