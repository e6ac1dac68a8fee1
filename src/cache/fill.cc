#include "cache/fill.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "cache/front.h"
#include "cache/variant.h"
#include "cache/zone.h"
#include "http/exchange.h"
#include "http/response.h"
#include "http/variables.h"
#include "log/error_log.h"

namespace torii::cache {

namespace {

bool hop_or_framing(std::string_view name) {
  static constexpr std::string_view kNames[] = {"connection", "keep-alive", "transfer-encoding", "content-length",
                                                "proxy-connection", "te", "trailer", "upgrade"};
  for (auto n : kNames) {
    if (n.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < n.size() && same; ++i) same = n[i] == char(std::tolower(static_cast<unsigned char>(name[i])));
    if (same) return true;
  }
  return false;
}

// The response head as stored: the status line and the upstream's fields
// but those about this connection and its framing (the length is the
// stored body's).
std::string stored_head(const http1::ParsedResponse& r) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " ";
  out.append(r.reason.empty() ? http::reason_phrase(r.status) : r.reason);
  out += "\r\n";
  for (const auto& h : r.headers) {
    if (hop_or_framing(h.name)) continue;
    out.append(h.name);
    out += ": ";
    out.append(h.value);
    out += "\r\n";
  }
  out += "\r\n";
  return out;
}

void make_parent_dirs(const std::string& path) {
  for (size_t i = path.find('/', 1); i != std::string::npos; i = path.find('/', i + 1))
    ::mkdir(path.substr(0, i).c_str(), 0700);
}

}  // namespace

Fill::Fill(std::shared_ptr<const config::CacheSettings> settings, std::shared_ptr<Zone> zone, const Md5& md5,
           std::string key, bool holds_lock)
    : settings_(std::move(settings)), zone_(std::move(zone)), md5_(md5), key_(std::move(key)), holds_lock_(holds_lock) {}

Fill::~Fill() {
  writer_.reset();  // removes an uncommitted temporary file
  if (holds_lock_) zone_->unlock(md5_);
}

bool Fill::on_head(http::Exchange& ex, const http1::ParsedResponse& r) {
  const int64_t now = ::time(nullptr);
  if (stale && r.status == 304 && settings_->revalidate) {
    // The stored response is still good: it answers, with a new validity.
    const Freshness f = judge(r, *settings_, now);
    int64_t valid = f.cacheable ? f.valid_sec : 0;
    if (!valid) {
      const int64_t seconds = valid_for_status(*settings_, 200);
      if (seconds > 0) valid = now + seconds;
    }
    if (valid > 0) {
      const std::string path = zone_->file_path(md5_);
      if (rewrite_validity(*stale, path, valid, now)) {
        auto renewed = std::make_shared<Entry>(*stale);
        renewed->valid_sec = valid;
        renewed->date_sec = now;
        zone_->renew(md5_, renewed);
      }
    }
    ex.upstream_cache_status = "REVALIDATED";
    zone_->counters.revalidated.fetch_add(1, std::memory_order_relaxed);
    revalidated_ = true;
    return true;
  }
  if (stale) {
    uint32_t cond = 0;
    switch (r.status) {
      case 500: cond = config::kStaleHttp500; break;
      case 502: cond = config::kStaleHttp502; break;
      case 503: cond = config::kStaleHttp503; break;
      case 504: cond = config::kStaleHttp504; break;
      case 403: cond = config::kStaleHttp403; break;
      case 404: cond = config::kStaleHttp404; break;
      case 429: cond = config::kStaleHttp429; break;
      default: break;
    }
    if (cond && may_serve_stale(cond, now)) return true;
  }
  if (!store) return false;
  if (http::any_true(settings_->no_cache, ex)) return false;
  // A HEAD that went upstream as HEAD has no body to keep.
  if (ex.req.method == http::Method::head && !changes.get_for_head) return false;
  const Freshness f = judge(r, *settings_, now);
  if (!f.cacheable) return false;
  EntryMeta meta;
  meta.key = key_;
  meta.vary = f.vary;
  if (!f.vary.empty()) meta.variant = variant_of(ex, f.vary);
  meta.etag = f.etag;
  meta.head = stored_head(r);
  meta.valid_sec = f.valid_sec;
  meta.date_sec = now;
  meta.last_modified = f.last_modified;
  meta.stale_while_revalidate = f.stale_while_revalidate;
  meta.stale_if_error = f.stale_if_error;
  writer_ = std::make_unique<EntryWriter>();
  const std::string temp = zone_->temp_path();
  bool opened = writer_->open(temp, meta);
  if (!opened && errno == ENOENT) {  // the zone's directory is gone: made again
    make_parent_dirs(temp);
    writer_ = std::make_unique<EntryWriter>();
    opened = writer_->open(temp, meta);
  }
  if (!opened) {
    log::write(config::LogLevel::crit, "open() \"%s\" failed (%d: %s)", temp.c_str(), errno, strerror(errno));
    writer_.reset();
    return false;
  }
  expected_length_ = r.content_length;
  return false;
}

void Fill::on_body(std::string_view data) {
  if (!writer_) return;
  if (!writer_->append(data)) {
    log::write(config::LogLevel::crit, "write to cache temporary file failed (%d: %s)", errno, strerror(errno));
    writer_.reset();
  }
}

void Fill::commit() {
  if (!writer_) return;
  if (expected_length_ >= 0 && writer_->written() != expected_length_) {
    writer_.reset();
    return;
  }
  const std::string path = zone_->file_path(md5_);
  auto entry = writer_->commit(path);
  if (!entry && errno == ENOENT) {
    // The level directories do not exist yet: made on first use.
    make_parent_dirs(path);
    entry = writer_->commit(path);
  }
  writer_.reset();
  if (!entry) {
    log::write(config::LogLevel::crit, "rename of a cache file to \"%s\" failed (%d: %s)", path.c_str(), errno,
               strerror(errno));
    return;
  }
  zone_->stored(md5_, std::move(entry));
}

bool Fill::may_serve_stale(uint32_t condition, int64_t now_sec) const {
  if (!stale) return false;
  if (settings_->use_stale & condition) return true;
  // stale-if-error (RFC 5861): within its window, an upstream that fails
  // (connection error, timeout, invalid header) answers stale. A status the
  // upstream sends (a 500, a 503) is its answer, as nginx since 1.19.3: that
  // it fills the cache again is the point; proxy_cache_use_stale http_500
  // still asks for stale then.
  constexpr uint32_t kFailures = config::kStaleError | config::kStaleTimeout | config::kStaleInvalidHeader;
  return (condition & kFailures) && now_sec < stale->valid_sec + stale->stale_if_error;
}

void Fill::send_stale(http::Exchange& ex, const config::ProxyConfig& cfg) {
  if (!revalidated_) {
    ex.upstream_cache_status = "STALE";
    zone_->counters.stale.fetch_add(1, std::memory_order_relaxed);
  }
  writer_.reset();
  send_entry(ex, cfg, *stale);
}

}  // namespace torii::cache
