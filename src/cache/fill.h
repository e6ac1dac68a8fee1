// What the upstream session does for the cache while it proxies a request
// the cache could not answer: the upstream request may change (HEAD sent
// as GET, the client's conditionals and Range left out, a stale entry's
// validators added), the response may be stored (its head and body written
// to a temporary file and renamed into place once complete), and a stale
// entry may answer instead (a 304 revalidated it, or the upstream failed
// and proxy_cache_use_stale allows it). Destroyed without a commit, the
// temporary file goes and the cache lock is released.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cache/entry_file.h"
#include "cache/freshness.h"
#include "cache/ranges.h"
#include "config/cache_config.h"
#include "http1/response_parser.h"

namespace torii::http {
class Exchange;
}
namespace torii::config {
struct ProxyConfig;
}

namespace torii::cache {

class Zone;

// Changes to the request that goes upstream.
struct UpstreamRequestChanges {
  bool get_for_head = false;       // proxy_cache_convert_head
  bool drop_conditionals = false;  // If-*, Range: the cache wants the whole response
  std::string if_modified_since;   // proxy_cache_revalidate of a stale entry
  std::string if_none_match;
};

class Fill {
 public:
  Fill(std::shared_ptr<const config::CacheSettings> settings, std::shared_ptr<Zone> zone, const Md5& md5,
       std::string key, bool holds_lock);
  ~Fill();
  Fill(const Fill&) = delete;
  Fill& operator=(const Fill&) = delete;

  UpstreamRequestChanges changes;
  bool store = true;  // false: proxy_cache_min_uses not reached, or the lock timed out
  // An entry past its validity (EXPIRED): revalidated by a 304, or served
  // when the upstream fails (proxy_cache_use_stale).
  std::shared_ptr<const Entry> stale;
  // A response being stored, asked for one range: the client gets that
  // range of the body as it streams by (cache/ranges.h).
  StreamedRange client_range;

  // The upstream's head. True when the stale entry answers instead (a 304
  // revalidated it, or use_stale covers this status); the session then
  // sends it with send_stale().
  bool on_head(http::Exchange& ex, const http1::ParsedResponse& r);
  void on_body(std::string_view data);
  // on_head() began writing the entry (the response is cacheable).
  bool storing() const { return writer_ != nullptr; }
  // The body is complete: the entry goes into place.
  void commit();
  // The try failed with this proxy_cache_use_stale condition (kStaleError,
  // kStaleTimeout...): true when the stale entry may answer.
  bool may_serve_stale(uint32_t condition, int64_t now_sec) const;
  // Sends the stale entry (status STALE, or REVALIDATED after a 304).
  void send_stale(http::Exchange& ex, const config::ProxyConfig& cfg);

 private:
  std::shared_ptr<const config::CacheSettings> settings_;
  std::shared_ptr<Zone> zone_;
  Md5 md5_;
  std::string key_;
  bool holds_lock_;
  bool revalidated_ = false;
  std::unique_ptr<EntryWriter> writer_;
  int64_t expected_length_ = -1;
};

}  // namespace torii::cache
