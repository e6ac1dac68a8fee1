#include "log/access_log_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace torii::log {

Status create_access_log_files(const config::Config& cfg) {
  for (const std::string& path : cfg.access_log_files) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int err = errno;
      return Error{"open() \"" + path + "\" failed (" + std::to_string(err) + ": " + std::strerror(err) + ")"};
    }
    ::close(fd);
  }
  return Ok{};
}

}  // namespace torii::log
