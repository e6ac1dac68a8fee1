#include "modules/random_index/random_index.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "http/exchange.h"
#include "http/log_context.h"
#include "log/error_log.h"

namespace torii::random_index {

namespace {

struct DirCloser {
  void operator()(DIR* d) const { closedir(d); }
};

// A regular file, or a link to one (a dangling link is not).
bool is_file(int dir_fd, const dirent& e) {
  if (e.d_type == DT_REG) return true;
  if (e.d_type != DT_LNK && e.d_type != DT_UNKNOWN) return false;
  struct stat st;
  return fstatat(dir_fd, e.d_name, &st, 0) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

Pick pick_file(http::Exchange& ex, const std::string& dir) {
  const std::string path = dir.size() > 1 ? dir.substr(0, dir.size() - 1) : dir;
  std::unique_ptr<DIR, DirCloser> d(opendir(path.c_str()));
  if (!d) {
    const int err = errno;
    const int status = err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG ? 404 : err == EACCES ? 403 : 500;
    if (status == 500) {
      TORII_LOG_EX(ex, crit, "opendir() \"%s\" failed (%d: %s)%s", path.c_str(), err, strerror(err),
                http::log_context(ex).c_str());
    } else {
      TORII_LOG_EX(ex, error, "opendir() \"%s\" failed (%d: %s)%s", path.c_str(), err, strerror(err),
                http::log_context(ex).c_str());
    }
    return Pick{std::string(), status};
  }
  std::vector<std::string> names;
  const int fd = dirfd(d.get());
  while (true) {
    errno = 0;
    const dirent* e = readdir(d.get());
    if (e == nullptr) {
      if (errno == 0) break;
      const int err = errno;
      TORII_LOG_EX(ex, crit, "readdir() \"%s\" failed (%d: %s)%s", path.c_str(), err, strerror(err),
                http::log_context(ex).c_str());
      return Pick{std::string(), 500};
    }
    if (e->d_name[0] == '.') continue;  // hidden files, "." and ".."
    // The pick becomes an internal redirect's URI, where '?' starts the
    // arguments: such a name could not be reached.
    if (strchr(e->d_name, '?') != nullptr) continue;
    if (is_file(fd, *e)) names.emplace_back(e->d_name);
  }
  if (names.empty()) return {};
  return Pick{std::move(names[arc4random_uniform(static_cast<uint32_t>(names.size()))]), 0};
}

}  // namespace torii::random_index
