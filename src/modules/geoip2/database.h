// One MaxMind DB file (.mmdb) of a geoip2 {} block, opened at load and
// shared by every worker thread through the config. With auto_reload the
// file is looked at again at most once per interval, from whichever
// request or session ends first after it (the module's log phase); a
// newer file is opened beside the old and swapped in whole, so a lookup
// holds the file it started with until it is done, and a file that does
// not open is logged and the old one kept.
#pragma once

#include <maxminddb.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <memory>
#include <span>
#include <string>

#include "core/result.h"

namespace torii::geoip2 {

// An open file: libmaxminddb's handle, closed when the last lookup that
// holds it lets go.
class OpenFile {
 public:
  // libmaxminddb's words on failure (MMDB_strerror).
  static Result<std::shared_ptr<const OpenFile>> open(const std::string& path);
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  const MMDB_s& mmdb() const { return mmdb_; }

 private:
  OpenFile() = default;
  MMDB_s mmdb_{};
};

class Database {
 public:
  // `path` as the config names it, the prefix already applied. The error
  // is the module's: `MMDB_open("PATH") failed - REASON`.
  static Result<std::shared_ptr<Database>> open(const std::string& path);

  const std::string& path() const { return path_; }
  // auto_reload INTERVAL (seconds; 0: never), set while the config loads.
  void set_check_interval(int64_t seconds) { check_interval_ = seconds; }

  // The file lookups read now.
  std::shared_ptr<const OpenFile> current() const { return current_.load(std::memory_order_acquire); }
  // For $var metadata last_check / last_change: when the file was last
  // looked at, and the modification time of the one in use (at first, the
  // time the config loaded, as the module has it).
  time_t last_check() const { return last_check_.load(std::memory_order_relaxed); }
  time_t last_change() const { return last_change_.load(std::memory_order_relaxed); }

  // auto_reload's check, at most once per interval across all threads.
  void check_for_change(time_t now);

 private:
  Database(std::string path, std::shared_ptr<const OpenFile> file, time_t now);

  std::string path_;
  int64_t check_interval_ = 0;
  std::atomic<std::shared_ptr<const OpenFile>> current_;
  std::atomic<time_t> last_check_;
  std::atomic<time_t> last_change_;
};

// The check of every database with auto_reload, once a request or session
// is over.
void check_for_changes(std::span<const std::shared_ptr<Database>> databases);

}  // namespace torii::geoip2
