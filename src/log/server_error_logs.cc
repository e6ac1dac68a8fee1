#include "log/server_error_logs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace torii::log {

namespace {

std::mutex g_mu;
std::unordered_map<std::string, int> g_files;  // guarded by g_mu

int open_append(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0 && fd <= STDERR_FILENO) {
    // A closed standard descriptor's number must not become a log.
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    const int saved = errno;
    ::close(fd);
    errno = saved;
    fd = moved;
  }
  return fd;
}

}  // namespace

int server_error_log_fd(const std::string& path) {
  if (path == "stderr") return STDERR_FILENO;
  std::lock_guard lock(g_mu);
  auto it = g_files.find(path);
  if (it != g_files.end()) return it->second;
  const int fd = open_append(path);
  if (fd >= 0) g_files.emplace(path, fd);
  return fd;
}

Status open_request_error_logs(const config::Config& cfg) {
  for (const std::string& path : cfg.error_log_files) {
    if (server_error_log_fd(path) >= 0) continue;
    const int err = errno;
    return Error{"open() \"" + path + "\" failed (" + std::to_string(err) + ": " + std::strerror(err) + ")"};
  }
  return Ok{};
}

void reopen_server_error_logs() {
  std::lock_guard lock(g_mu);
  for (auto& [path, fd] : g_files) {
    const int fresh = open_append(path);
    if (fresh < 0) continue;  // the old file keeps the lines
    ::dup3(fresh, fd, O_CLOEXEC);
    ::close(fresh);
  }
}

}  // namespace torii::log
