#include "net/unix_listeners.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "log/error_log.h"
#include "net/listener.h"

namespace torii::net::unix_listeners {

namespace {

std::mutex g_mutex;
std::map<std::string, int> g_sockets;  // "unix:PATH" -> the process's own descriptor

const char* path_of(const config::Listen& l) { return reinterpret_cast<const sockaddr_un&>(l.addr).sun_path; }

std::string errno_text(int err) { return "(" + std::to_string(err) + ": " + strerror(err) + ")"; }

// A socket file nobody accepts on: what a process that was killed leaves.
// A live server (or a full backlog: EAGAIN) and anything not a socket stay.
bool is_stale_socket(const config::Listen& l) {
  struct stat st {};
  if (lstat(path_of(l), &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (probe < 0) return false;
  const bool refused = connect(probe, reinterpret_cast<const sockaddr*>(&l.addr), l.addr_len) != 0 &&
                       errno == ECONNREFUSED;
  close(probe);
  return refused;
}

Result<int> bind_and_listen(const config::Listen& l) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("socket() failed: ") + strerror(errno));
  int rc = bind(fd, reinterpret_cast<const sockaddr*>(&l.addr), l.addr_len);
  if (rc != 0 && errno == EADDRINUSE && is_stale_socket(l)) {
    TORII_LOG(notice, "removed the stale socket file of %s: nothing accepted on it", l.text.c_str());
    unlink(path_of(l));
    rc = bind(fd, reinterpret_cast<const sockaddr*>(&l.addr), l.addr_len);
  }
  if (rc != 0) {
    const int err = errno;
    close(fd);
    return make_error("bind() to " + l.text + " failed " + errno_text(err));
  }
  // Any local user may connect, as nginx: the directory's permissions are
  // the place to restrict it.
  if (chmod(path_of(l), 0666) != 0) TORII_LOG(emerg, "chmod() \"%s\" failed %s", path_of(l), errno_text(errno).c_str());
  apply_listen_options(fd, l);
  if (listen(fd, l.backlog) != 0) {
    const int err = errno;
    close(fd);
    unlink(path_of(l));
    return make_error("listen() to " + l.text + " failed " + errno_text(err));
  }
  return fd;
}

void close_and_remove(const std::string& text, int fd) {
  close(fd);
  if (unlink(text.c_str() + 5) != 0 && errno != ENOENT)
    TORII_LOG(alert, "unlink() \"%s\" failed %s", text.c_str() + 5, errno_text(errno).c_str());
}

}  // namespace

Result<int> open(const config::Listen& l) {
  std::lock_guard lock(g_mutex);
  auto it = g_sockets.find(l.text);
  if (it == g_sockets.end()) {
    auto fd = bind_and_listen(l);
    if (!fd) return fd;
    it = g_sockets.emplace(l.text, *fd).first;
  }
  const int copy = fcntl(it->second, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return make_error("dup() of " + l.text + " failed " + errno_text(errno));
  return copy;
}

void keep_only(const std::vector<std::string>& kept) {
  std::lock_guard lock(g_mutex);
  for (auto it = g_sockets.begin(); it != g_sockets.end();) {
    if (std::find(kept.begin(), kept.end(), it->first) != kept.end()) {
      ++it;
      continue;
    }
    close_and_remove(it->first, it->second);
    it = g_sockets.erase(it);
  }
}

void close_all() { keep_only({}); }

}  // namespace torii::net::unix_listeners
