#include "handlers/symlink_walk.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

namespace torii::handlers {

namespace {

constexpr int kSearch = O_PATH | O_RDONLY | O_NONBLOCK | O_CLOEXEC;

void close_keeping_errno(int fd) {
  const int saved = errno;
  ::close(fd);
  errno = saved;
}

// openat() that follows a link only when the link and what it names have
// the same owner. The link may have been swapped between the two looks,
// so the owners are compared even when fstatat() sees no link.
int openat_same_owner(int at, const char* name, int flags) {
  const int fd = ::openat(at, name, flags);
  if (fd < 0) return -1;
  struct stat link {}, target {};
  if (::fstatat(at, name, &link, AT_SYMLINK_NOFOLLOW) != 0 || ::fstat(fd, &target) != 0) {
    close_keeping_errno(fd);
    return -1;
  }
  if (link.st_uid != target.st_uid) {
    ::close(fd);
    errno = ELOOP;
    return -1;
  }
  return fd;
}

int open_step(int at, const char* name, int flags, SymlinkPolicy::Mode mode) {
  if (mode == SymlinkPolicy::Mode::if_not_owner) return openat_same_owner(at, name, flags);
  return ::openat(at, name, flags | O_NOFOLLOW);
}

}  // namespace

SymlinkPolicy symlink_policy_for(SymlinkPolicy::Mode mode, const std::string& from, const std::string& path) {
  SymlinkPolicy p{mode, 0};
  if (mode == SymlinkPolicy::Mode::off || from.empty() || from.size() > path.size() ||
      path.compare(0, from.size(), from) != 0)
    return p;
  if (from.size() == path.size()) return SymlinkPolicy{};  // the trusted prefix itself
  if (path[from.size()] == '/') {
    p.from = from.size();
  } else if (path[from.size() - 1] == '/') {
    p.from = from.size() - 1;  // "from=/srv/" for "/srv/x"
  }
  return p;
}

int open_with_policy(const std::string& path, int flags, const SymlinkPolicy& policy) {
  flags |= O_CLOEXEC;
  if (policy.mode == SymlinkPolicy::Mode::off) return ::open(path.c_str(), flags);

  std::string name(path);  // components are cut in place with NULs
  size_t pos = 0;
  int at = AT_FDCWD;
  if (policy.from > 0 && policy.from < name.size()) {
    name[policy.from] = '\0';
    at = ::open(name.c_str(), kSearch);
    name[policy.from] = '/';
    if (at < 0) return -1;
    pos = policy.from + 1;
  } else if (!name.empty() && name[0] == '/') {
    at = ::open("/", kSearch);
    if (at < 0) return -1;
    pos = 1;
  }

  int fd = -1;
  while (true) {
    const size_t slash = name.find('/', pos);
    if (slash == std::string::npos) break;
    if (slash == pos) {  // "//"
      ++pos;
      continue;
    }
    name[slash] = '\0';
    fd = open_step(at, name.c_str() + pos, kSearch, policy.mode);
    name[slash] = '/';
    if (fd < 0) {
      if (at != AT_FDCWD) close_keeping_errno(at);
      return -1;
    }
    if (at != AT_FDCWD) ::close(at);
    at = fd;
    pos = slash + 1;
  }

  if (pos == name.size()) {
    // A trailing slash: the last component was a directory; open it for real.
    fd = ::openat(at, ".", flags);
  } else {
    fd = open_step(at, name.c_str() + pos, flags, policy.mode);
  }
  if (at != AT_FDCWD) close_keeping_errno(at);
  return fd;
}

}  // namespace torii::handlers
