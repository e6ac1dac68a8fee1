// The encoded bytes of whole static files, per worker thread: a file sent
// whole with a coding is encoded once per file version and coding, and the
// next response for it copies the stored bytes instead of encoding again,
// so a compressible static file costs what a precompressed one costs.
//
// An entry is keyed by the file's path, coding and level and remembers the
// file's inode, mtime and size: a response for a changed file (the
// open-file cache reopens it with new values) finds the entry stale and
// drops it. The total is bounded (least recently used first out), and so
// is the size of a file that is kept.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "http/response.h"
#include "modules/compression/accept_encoding.h"

namespace torii::compression {

class EncodedCache {
 public:
  static constexpr size_t kBudget = 32 * 1024 * 1024;   // encoded bytes per worker
  static constexpr int64_t kMaxFileSize = 8 * 1024 * 1024;  // larger files are encoded per response

  // This thread's cache.
  static EncodedCache& local();

  // The stored encoding of `file` (at `path`), or null.
  std::shared_ptr<const std::string> find(const std::string& path, Coding coding, int level,
                                          const http::OpenFile& file);
  void store(const std::string& path, Coding coding, int level, const http::OpenFile& file,
             std::shared_ptr<const std::string> bytes);

  size_t bytes() const { return bytes_; }
  size_t size() const { return lru_.size(); }
  void clear();

 private:
  struct Entry {
    std::string key;
    uint64_t inode = 0;
    int64_t mtime = 0;
    int64_t size = 0;
    std::shared_ptr<const std::string> bytes;
  };
  using List = std::list<Entry>;  // most recently used first

  static std::string make_key(const std::string& path, Coding coding, int level);
  void erase(List::iterator it);

  List lru_;
  std::unordered_map<std::string_view, List::iterator> index_;  // views Entry::key
  size_t bytes_ = 0;
};

}  // namespace torii::compression
