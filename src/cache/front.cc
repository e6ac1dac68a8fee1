#include "cache/front.h"

#include <algorithm>
#include <ctime>
#include <string>

#include "cache/background.h"
#include "cache/purge.h"
#include "cache/ranges.h"
#include "cache/variant.h"
#include "cache/zone.h"
#include "config/cache_config.h"
#include "config/proxy_config.h"
#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "handlers/proxy_headers.h"
#include "http/exchange.h"
#include "http/preconditions.h"
#include "http/date.h"
#include "http/pipeline.h"
#include "http/range.h"
#include "http/range_response.h"
#include "http/variables.h"
#include "http/log_context.h"
#include "log/error_log.h"

namespace torii::cache {

namespace {

// A waiter looks at the lock this often even unwoken (nginx polls at this
// pace): a lock past proxy_cache_lock_age is free with no release.
constexpr int64_t kLockRecheckMs = 500;

// nginx's key when no proxy_cache_key is set (ngx_http_proxy_create_key):
// the proxy_pass URL's scheme and host, then the URI the request goes
// upstream with. Not the documented $scheme$proxy_host$request_uri: two
// locations passing one request URI to different upstream paths of a
// shared zone would share entries.
std::string default_key(const http::Exchange& ex, const config::ProxyConfig& cfg) {
  const std::string_view scheme = cfg.ssl ? "https://" : "http://";
  std::string key;
  const std::string_view url = cfg.url;
  if (url.substr(scheme.size()).starts_with("unix:")) {
    const size_t end = url.find(':', scheme.size() + 5);
    key = end == std::string_view::npos ? std::string(url) + ":" : std::string(url.substr(0, end + 1));  // as nginx
  } else {
    key = scheme;
    key += !ex.proxy_host.empty() ? ex.proxy_host : cfg.proxy_host;
  }
  key += handlers::upstream_uri(ex, cfg);
  return key;
}

uint32_t method_bit(http::Method m) {
  switch (m) {
    case http::Method::get: return config::kCacheGet;
    case http::Method::head: return config::kCacheHead;
    case http::Method::post: return config::kCachePost;
    default: return 0;
  }
}

// One request's way through the cache, shared by its attempts (a lock
// waiter tries again).
struct Attempt {
  std::shared_ptr<const config::CacheSettings> settings;
  std::shared_ptr<Zone> zone;
  std::string key;
  Md5 md5{};
  int64_t lock_deadline_ms = 0;  // set when waiting for a lock began
  bool lock_timed_out = false;
  StartUpstream start;
};

void attempt(http::Exchange& ex, const config::ProxyConfig& cfg, const std::shared_ptr<Attempt>& a);

// Waits for another request's fill of the same entry (proxy_cache_lock):
// the zone wakes it on its own loop when the lock is released, whichever
// worker released it. The timer is for lock_timeout and for a lock that
// outlived lock_age (its holder gone quiet), which nobody releases.
class LockWaiter final : public http::Exchange::HandlerState {
 public:
  LockWaiter(http::Exchange& ex, const config::ProxyConfig& cfg, std::shared_ptr<Attempt> a)
      : ex_(ex), cfg_(cfg), attempt_(std::move(a)), loop_(*ex.services().loop), timer_(&LockWaiter::on_timer, this) {
    // Released already: look again at once (from the timer, as this
    // object is being put in the exchange now).
    loop_.arm(timer_, listen() ? recheck_in() : 0);
  }
  ~LockWaiter() override { loop_.cancel(timer_); }

 private:
  static void on_timer(void* self) { static_cast<LockWaiter*>(self)->poll(); }
  // Asks the zone for a wake-up; false when the lock is gone.
  bool listen() {
    if (listening_) return true;
    listening_ = attempt_->zone->wait_for_unlock(
        attempt_->md5, Zone::LockWaiter{&loop_, alive_, [this] {
                                          listening_ = false;
                                          poll();
                                        }});
    return listening_;
  }
  int64_t recheck_in() const {
    return std::max<int64_t>(0, std::min(kLockRecheckMs, attempt_->lock_deadline_ms - loop_.now_ms()));
  }
  void poll() {
    const bool timed_out = loop_.now_ms() >= attempt_->lock_deadline_ms;
    if (!timed_out && attempt_->zone->is_updating(attempt_->md5) && listen()) {
      loop_.cancel(timer_);
      loop_.arm(timer_, recheck_in());
      return;
    }
    loop_.cancel(timer_);
    if (timed_out) {
      attempt_->lock_timed_out = true;
      if (log::enabled(config::LogLevel::info))
        log::write(config::LogLevel::info, "cache lock timeout for \"%s\"", attempt_->key.c_str());
    }
    // Look again at the end of the turn: the next step replaces this
    // waiter in the exchange, which must not happen inside its own call.
    std::weak_ptr<char> alive = alive_;
    http::Exchange* ex = &ex_;
    const config::ProxyConfig* cfg = &cfg_;
    auto a = attempt_;
    loop_.defer([alive, ex, cfg, a] {
      if (alive.expired() || ex->finished()) return;
      attempt(*ex, *cfg, a);
    });
  }

  http::Exchange& ex_;
  const config::ProxyConfig& cfg_;
  std::shared_ptr<Attempt> attempt_;
  core::EventLoop& loop_;
  core::Timer timer_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
  bool listening_ = false;  // the zone will wake this waiter
};

std::unique_ptr<Fill> make_fill(http::Exchange& ex, const Attempt& a, bool holds_lock) {
  auto fill = std::make_unique<Fill>(a.settings, a.zone, a.md5, a.key, holds_lock);
  fill->changes.drop_conditionals = true;
  fill->changes.get_for_head = ex.req.method == http::Method::head && a.settings->convert_head;
  return fill;
}

void attempt(http::Exchange& ex, const config::ProxyConfig& cfg, const std::shared_ptr<Attempt>& a) {
  const auto& s = *a->settings;
  Zone& zone = *a->zone;
  const int64_t now = ::time(nullptr);
  Zone::Lookup found = zone.lookup(a->md5, a->key, now);
  if (found.entry && !found.entry->vary.empty()) {
    // The stored response varies on request fields: another variant is
    // kept under a key of its own.
    const Md5 variant = variant_of(ex, found.entry->vary);
    if (variant != found.entry->variant) {
      a->md5 = variant_md5(a->key, variant);
      found = zone.lookup(a->md5, a->key, now);
    }
  }

  if (found.found == Found::fresh) {
    ex.upstream_cache_status = "HIT";
    zone.counters.hit.fetch_add(1, std::memory_order_relaxed);
    send_entry(ex, cfg, *found.entry);
    return;
  }

  std::unique_ptr<Fill> fill;
  if (found.found == Found::stale) {
    const Entry& e = *found.entry;
    const bool may_update_stale = (s.use_stale & config::kStaleUpdating) || now < e.valid_sec + e.stale_while_revalidate;
    // proxy_cache_background_update: the stale entry answers now and a
    // request of its own refreshes it (that one takes the lock), unless
    // one already does. A request body would have to be kept for it: such
    // a request updates in the foreground.
    if (s.background_update && may_update_stale && !ex.background && !ex.has_body() && ex.services().cache_updates) {
      const bool updating = zone.is_updating(a->md5);
      ex.upstream_cache_status = updating ? "UPDATING" : "STALE";
      (updating ? zone.counters.updating : zone.counters.stale).fetch_add(1, std::memory_order_relaxed);
      if (!updating) ex.services().cache_updates->start(ex);
      send_entry(ex, cfg, e);
      return;
    }
    if (zone.try_lock(a->md5, s.lock_age.count())) {
      fill = make_fill(ex, *a, true);
    } else if (may_update_stale) {
      // Another request is updating the entry: the stale one answers.
      ex.upstream_cache_status = "UPDATING";
      zone.counters.updating.fetch_add(1, std::memory_order_relaxed);
      send_entry(ex, cfg, e);
      return;
    } else {
      fill = make_fill(ex, *a, false);
    }
    ex.upstream_cache_status = "EXPIRED";
    zone.counters.expired.fetch_add(1, std::memory_order_relaxed);
    fill->stale = found.entry;
    if (s.revalidate) {
      if (e.last_modified >= 0) fill->changes.if_modified_since = http::format_http_date(e.last_modified);
      fill->changes.if_none_match = e.etag;
    }
    a->start(ex, std::move(fill));
    return;
  }

  ex.upstream_cache_status = "MISS";
  if (found.uses < s.min_uses) {
    zone.counters.miss.fetch_add(1, std::memory_order_relaxed);
    fill = make_fill(ex, *a, false);
    fill->store = false;
    a->start(ex, std::move(fill));
    return;
  }
  if (s.lock && !a->lock_timed_out && !zone.try_lock(a->md5, s.lock_age.count())) {
    if (a->lock_deadline_ms == 0) a->lock_deadline_ms = ex.services().loop->now_ms() + s.lock_timeout.count();
    ex.handler_state = std::make_unique<LockWaiter>(ex, cfg, a);
    return;
  }
  zone.counters.miss.fetch_add(1, std::memory_order_relaxed);
  fill = make_fill(ex, *a, s.lock && !a->lock_timed_out);
  // nginx: a request that waited out the lock is not cached.
  if (a->lock_timed_out) fill->store = false;
  a->start(ex, std::move(fill));
}

int64_t header_date(std::string_view v) {
  auto t = http::parse_http_date(v);
  return t ? *t : -1;
}

}  // namespace

void serve(http::Exchange& ex, const config::ProxyConfig& cfg, StartUpstream start) {
  const auto& s = *cfg.cache;
  bool by_method = false;  // the ngx_cache_purge module's `proxy_cache_purge PURGE ...`
  if (s.purge_by_method) {
    switch (method_purge(ex, *s.purge_by_method)) {
      case MethodPurge::refused: return;
      case MethodPurge::yes: by_method = true; break;
      case MethodPurge::no: break;
    }
  }
  if (!s.enabled()) {  // only the purge method brought the request here
    if (by_method) http::send_error(ex, 404);  // as the module: no cache to purge
    else start(ex, nullptr);
    return;
  }
  const bool purging = by_method || (!s.purge.empty() && http::any_true(s.purge, ex));  // any method (PURGE, usually)
  if (!purging && !(method_bit(ex.req.method) & s.methods)) {
    start(ex, nullptr);  // not a cached method: $upstream_cache_status stays empty
    return;
  }
  std::shared_ptr<Zone> zone = s.zone ? s.zone->zone : nullptr;
  if (!s.zone_from.empty()) {
    std::string name;
    http::render(s.zone_from, ex, name);
    if (name.empty() || name == "off") {
      if (by_method) http::send_error(ex, 404);
      else start(ex, nullptr);  // no cache for this request
      return;
    }
    zone = nullptr;
    for (const auto& z : ex.config->cache_zones)
      if (z->name == name && z->defined) zone = z->zone;
    if (!zone) {
      TORII_LOG_EX(ex, error, "cache \"%s\" not found%s", name.c_str(), http::log_context(ex).c_str());
      http::send_error(ex, 500);
      return;
    }
  }
  auto a = std::make_shared<Attempt>();
  a->settings = cfg.cache;
  a->zone = std::move(zone);
  a->start = std::move(start);
  if (s.key.empty()) {
    if (s.key_defaults_to_url) a->key = default_key(ex, cfg);
  } else {
    http::render(s.key, ex, a->key);
  }
  if (by_method) {
    answer_method_purge(ex, *a->zone, a->key, s.purge_by_method->all_entries);
    return;
  }
  if (purging) {
    answer_condition_purge(ex, *a->zone, a->key);
    return;
  }
  a->md5 = md5_of(a->key);
  if (http::any_true(s.bypass, ex)) {
    ex.upstream_cache_status = "BYPASS";
    a->zone->counters.bypass.fetch_add(1, std::memory_order_relaxed);
    // The response may still be stored (proxy_no_cache decides).
    a->start(ex, make_fill(ex, *a, false));
    return;
  }
  attempt(ex, cfg, a);
}

void send_entry(http::Exchange& ex, const config::ProxyConfig& cfg, const Entry& entry) {
  http1::ResponseParser parser(entry.head.size() + 1, 1000);
  http1::ParsedResponse r;
  size_t consumed = 0;
  if (parser.parse(entry.head, r, consumed) != http1::ParseStatus::done) {
    log::write(config::LogLevel::crit, "cache entry for \"%s\" has a bad header: %s", entry.key.c_str(),
               parser.error());
    http::send_error(ex, 500);
    return;
  }
  r.content_length = entry.body_length;
  http::ResponseHead head;
  handlers::build_response_head(ex, cfg, r, http1::BodyFraming::length, head);
  head.content_length = entry.body_length;
  int64_t offset = 0, length = entry.body_length;

  // Client conditionals and ranges against the stored response, as for a
  // static file: a 200 with validators may become a 304, or a 206.
  if (head.status == 200) {
    const std::string* etag = head.find("ETag");
    const std::string* lm = head.find("Last-Modified");
    const int pre = http::evaluate_preconditions(ex, etag ? std::string_view(*etag) : std::string_view(),
                                                 lm ? header_date(*lm) : -1);
    if (pre == 412) {
      http::send_error(ex, 412);
      return;
    }
    if (pre == 304) {
      head.status = 304;
      head.content_length = -1;
      ex.header_only = true;
      ex.send_head(std::move(head));
      ex.finish();
      return;
    }
    std::vector<http::ByteRange> ranges;
    if (const http::Header* range = applicable_range(ex, head)) {
      switch (http::parse_range(range->value, entry.body_length, ranges,
                                http::range_limit(ex.settings().core.max_ranges))) {
        case http::RangeOutcome::ok:
          if (ranges.size() > 1) {
            const std::string* found_type = head.find("Content-Type");
            const std::string type = found_type ? *found_type : std::string();
            http::send_multipart(ex, std::move(head), entry.file, entry.body_offset, entry.body_length, type,
                                 ranges);
            return;
          }
          head.status = 206;
          head.add("Content-Range", http::content_range(ranges[0], entry.body_length));
          offset = ranges[0].start;
          length = ranges[0].length();
          head.content_length = length;
          break;
        case http::RangeOutcome::unsatisfiable:
          ex.response.add("Content-Range", "bytes */" + std::to_string(entry.body_length));
          http::send_error(ex, 416);
          return;
        case http::RangeOutcome::ignore:
          break;
      }
    }
  }
  ex.send_head(std::move(head));
  if (!ex.header_only && length > 0) ex.send_file(entry.file, entry.body_offset + offset, length);
  ex.finish();
}

}  // namespace torii::cache
