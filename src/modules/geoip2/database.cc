#include "modules/geoip2/database.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/quote.h"
#include "log/error_log.h"

namespace torii::geoip2 {

Result<std::shared_ptr<const OpenFile>> OpenFile::open(const std::string& path) {
  std::shared_ptr<OpenFile> file(new OpenFile());
  const int status = MMDB_open(path.c_str(), MMDB_MODE_MMAP, &file->mmdb_);
  if (status != MMDB_SUCCESS) {
    // MMDB_open has released what it took; the destructor must not close.
    file->mmdb_ = MMDB_s{};
    return make_error(MMDB_strerror(status));
  }
  return std::shared_ptr<const OpenFile>(std::move(file));
}

OpenFile::~OpenFile() {
  if (mmdb_.filename) MMDB_close(&mmdb_);
}

Database::Database(std::string path, std::shared_ptr<const OpenFile> file, time_t now)
    : path_(std::move(path)), current_(std::move(file)), last_check_(now), last_change_(now) {}

Result<std::shared_ptr<Database>> Database::open(const std::string& path) {
  auto file = OpenFile::open(path);
  if (!file) return make_error("MMDB_open(" + q(path) + ") failed - " + file.error());
  return std::shared_ptr<Database>(new Database(path, std::move(*file), time(nullptr)));
}

void Database::check_for_change(time_t now) {
  if (check_interval_ <= 0) return;
  time_t checked = last_check_.load(std::memory_order_relaxed);
  if (checked + check_interval_ > now) return;
  // One thread takes this interval's check; the others go on with the file
  // they have.
  if (!last_check_.compare_exchange_strong(checked, now, std::memory_order_relaxed)) return;
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) {
    const int err = errno;
    TORII_LOG(emerg, "stat() \"%s\" failed (%d: %s)", path_.c_str(), err, strerror(err));
    return;
  }
  if (st.st_mtime <= last_change_.load(std::memory_order_relaxed)) return;
  auto file = OpenFile::open(path_);
  if (!file) {
    TORII_LOG(error, "MMDB_open(\"%s\") failed to reload - %s", path_.c_str(), file.error().c_str());
    return;
  }
  last_change_.store(st.st_mtime, std::memory_order_relaxed);
  current_.store(std::move(*file), std::memory_order_release);
  TORII_LOG(info, "Reload MMDB \"%s\"", path_.c_str());
}

void check_for_changes(std::span<const std::shared_ptr<Database>> databases) {
  if (databases.empty()) return;
  const time_t now = time(nullptr);
  for (const auto& db : databases) db->check_for_change(now);
}

}  // namespace torii::geoip2
