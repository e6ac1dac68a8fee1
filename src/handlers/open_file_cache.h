// Opening files for the static handler, with nginx's open_file_cache: per
// worker (single-threaded, no locks), keeping descriptors and stat results
// so a hot file costs no open/fstat per request.
//
//   max       at most this many entries; the least recently used goes first
//   inactive  an entry not used for this long is dropped
//   valid     after this long an entry is re-checked with stat(); a changed
//             inode, mtime, size or type reopens the file (responses still
//             in flight keep the old descriptor until they finish)
//   min_uses  a descriptor is kept only once the path was asked for this
//             many times within `inactive`; before that it is opened per use
//   errors    open errors (ENOENT, EACCES, ...) are cached like files
//
// A cached file of up to kMaxContentBytes also keeps its bytes (at most
// kContentBudget per worker): responses that must copy the bytes into
// memory anyway (TLS records, HTTP/2 frames) copy them from there, not
// with a pread each. They are read when the entry is made and renewed with
// it, so the bytes, length and validators of a response always agree.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "http/response.h"

namespace torii::core {
class EventLoop;
}

namespace torii::handlers {

// `err` when the path exists but is neither a regular file nor a directory
// (FIFO, socket, device): nginx answers those with 404.
inline constexpr int kErrNotRegularFile = -1;

// A file (or directory: fd -1, is_dir) or the errno that stopped us.
struct OpenResult {
  std::shared_ptr<const http::OpenFile> file;
  int err = 0;
  bool ok() const { return file != nullptr; }
};

// open(O_RDONLY|O_NONBLOCK|O_CLOEXEC) + fstat, without a cache. `path` must
// be NUL-terminated (std::string guarantees it). O_NONBLOCK keeps a FIFO
// from blocking the worker in open(). A regular file of at most
// `keep_content_up_to` bytes is also read into OpenFile::content.
OpenResult open_file(const std::string& path, size_t keep_content_up_to = 0);

class OpenFileCache {
 public:
  static constexpr size_t kMaxContentBytes = 64 * 1024;
  static constexpr size_t kContentBudget = 16 * 1024 * 1024;

  struct Stats {
    uint64_t hits = 0;          // served from a cached entry
    uint64_t misses = 0;        // opened (no entry, or below min_uses)
    uint64_t revalidations = 0; // stat() after `valid` ran out
    uint64_t reopens = 0;       // revalidation found a changed file
    uint64_t evictions = 0;     // dropped by max or inactive
    size_t content_bytes = 0;   // file bytes held in memory now
  };

  OpenFileCache() = default;
  OpenFileCache(const OpenFileCache&) = delete;
  OpenFileCache& operator=(const OpenFileCache&) = delete;

  // Opens `path` under `cfg` (cfg.enabled false or max 0: no caching).
  OpenResult open(const std::string& path, const config::OpenFileCache& cfg);
  // The same with the clock given, in milliseconds on a monotonic scale.
  OpenResult open(const std::string& path, const config::OpenFileCache& cfg, int64_t now_ms);

  // Without open_file_cache: a file opened in this loop turn also serves
  // the turn's other requests for the same path, and is let go at the
  // turn's end. Requests handled in one turn are served as if they had
  // come together, so a file replaced on disk is still seen from the next
  // turn on, as with an open per request; at saturation the open, fstat
  // and close are shared by a turn's requests instead of made by each.
  // Only files and folders that opened are kept, at most kTurnEntries.
  // `with_bytes`: the response will copy the file through memory (TLS,
  // HTTP/2 and 3, sendfile off), so a small file's bytes are read with the
  // open and the turn's other responses take them from there too.
  OpenResult open_this_turn(const std::string& path, bool with_bytes, core::EventLoop& loop);
  // torii changed a file itself (WebDAV, a stored response): the next
  // open must see it even within this turn.
  void forget_this_turn();

  size_t size() const { return lru_.size(); }
  const Stats& stats() const { return stats_; }
  void clear();

 private:
  struct Entry {
    std::string path;
    std::shared_ptr<const http::OpenFile> file;  // null: error or still counting uses
    int err = 0;
    unsigned uses = 0;
    int64_t last_used_ms = 0;
    int64_t validated_ms = 0;  // when `file`/`err` was last known true
  };
  using List = std::list<Entry>;  // most recently used first

  void expire(const config::OpenFileCache& cfg, int64_t now_ms);
  void erase(List::iterator it);
  // Opens for an entry that will keep the file: with its bytes if they fit.
  OpenResult open_kept(const std::string& path);
  // Points the entry at `file` (or none), keeping the byte count true.
  void hold(Entry& e, std::shared_ptr<const http::OpenFile> file);
  // Re-stats a cached file; false if it changed or vanished.
  static bool still_same(const Entry& e);

  struct TurnEntry {
    std::string path;
    std::shared_ptr<const http::OpenFile> file;
  };
  static constexpr size_t kTurnEntries = 8;
  std::vector<TurnEntry> turn_;  // the first turn_used_ are this turn's; the rest keep their paths' memory
  size_t turn_used_ = 0;

  List lru_;
  // Keys view Entry::path, which a std::list node never moves.
  std::unordered_map<std::string_view, List::iterator> index_;
  Stats stats_;
};

}  // namespace torii::handlers
