#include "modules/dav/dav_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "http/log_context.h"
#include "log/error_log.h"

namespace torii::dav {

namespace {

using http::Exchange;

void log_failure(const Exchange& ex, bool crit, const char* call, const std::string& path, int err) {
  if (crit) {
    TORII_LOG_EX(ex, crit, "%s \"%s\" failed (%d: %s)%s", call, path.c_str(), err, std::strerror(err), http::log_context(ex).c_str());
  } else {
    TORII_LOG_EX(ex, error, "%s \"%s\" failed (%d: %s)%s", call, path.c_str(), err, std::strerror(err), http::log_context(ex).c_str());
  }
}

// A folder opened without following a link in its last component.
DIR* open_folder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return nullptr;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) ::close(fd);
  return d;
}

enum class Kind { file, folder, other };

// The entry's own kind (a link is "other"), from d_type when the file
// system gives it.
Kind kind_of(DIR* d, const dirent* e, struct stat* st) {
  if (st == nullptr && e->d_type != DT_UNKNOWN)
    return e->d_type == DT_REG ? Kind::file : e->d_type == DT_DIR ? Kind::folder : Kind::other;
  struct stat own;
  struct stat* s = st != nullptr ? st : &own;
  if (::fstatat(::dirfd(d), e->d_name, s, AT_SYMLINK_NOFOLLOW) != 0) return Kind::other;
  return S_ISREG(s->st_mode) ? Kind::file : S_ISDIR(s->st_mode) ? Kind::folder : Kind::other;
}

bool skip(const dirent* e) {
  return std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0;
}

void set_times(const char* path, int fd, int64_t mtime) {
  struct timespec ts[2];
  ts[0].tv_sec = ts[1].tv_sec = static_cast<time_t>(mtime);
  ts[0].tv_nsec = ts[1].tv_nsec = 0;
  if (fd >= 0) {
    ::futimens(fd, ts);
  } else {
    ::utimensat(AT_FDCWD, path, ts, 0);
  }
}

}  // namespace

bool remove_tree_contents(const Exchange& ex, const std::string& dir) {
  DIR* d = open_folder(dir);
  if (d == nullptr) {
    log_failure(ex, true, "opendir()", dir, errno);
    return false;
  }
  std::string child;
  while (const dirent* e = ::readdir(d)) {
    if (skip(e)) continue;
    child.assign(dir).append("/").append(e->d_name);
    if (kind_of(d, e, nullptr) == Kind::folder) {
      const int saved = errno;
      remove_tree_contents(ex, child);
      errno = saved;
      if (::rmdir(child.c_str()) != 0) log_failure(ex, errno != ENOENT && errno != EACCES && errno != EPERM, "rmdir()", child, errno);
    } else if (::unlink(child.c_str()) != 0) {
      log_failure(ex, errno != ENOENT && errno != EACCES && errno != EPERM, "unlink()", child, errno);
    }
  }
  ::closedir(d);
  return true;
}

bool copy_tree_contents(const Exchange& ex, const std::string& from, const std::string& to) {
  DIR* d = open_folder(from);
  if (d == nullptr) {
    log_failure(ex, true, "opendir()", from, errno);
    return false;
  }
  std::string src;
  std::string dst;
  while (const dirent* e = ::readdir(d)) {
    if (skip(e)) continue;
    struct stat st;
    const Kind k = kind_of(d, e, &st);
    if (k == Kind::other) continue;
    src.assign(from).append("/").append(e->d_name);
    dst.assign(to).append("/").append(e->d_name);
    if (k == Kind::file) {
      copy_file(ex, src, dst, st.st_mode & 0777, st.st_mtim.tv_sec);
      continue;
    }
    if (::mkdir(dst.c_str(), dir_access(st.st_mode & 0777)) != 0) log_failure(ex, errno != EEXIST, "mkdir()", dst, errno);
    copy_tree_contents(ex, src, dst);
    set_times(dst.c_str(), -1, st.st_mtim.tv_sec);
  }
  ::closedir(d);
  return true;
}

bool copy_file(const Exchange& ex, const std::string& from, const std::string& to, mode_t mode, int64_t mtime) {
  const int in = ::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0) {
    log_failure(ex, true, "open()", from, errno);
    return false;
  }
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (out < 0) {
    log_failure(ex, true, "open()", to, errno);
    ::close(in);
    return false;
  }
  bool ok = true;
  char buf[64 * 1024];
  while (true) {
    const ssize_t n = ::read(in, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      log_failure(ex, true, "read()", from, errno);
      ok = false;
      break;
    }
    for (ssize_t off = 0; off < n;) {
      const ssize_t w = ::write(out, buf + off, static_cast<size_t>(n - off));
      if (w < 0) {
        if (errno == EINTR) continue;
        log_failure(ex, true, "write()", to, errno);
        ok = false;
        break;
      }
      off += w;
    }
    if (!ok) break;
  }
  if (ok && mtime >= 0) set_times(to.c_str(), out, mtime);
  ::close(out);
  ::close(in);
  return ok;
}

int create_parent_folders(const std::string& path, mode_t mode) {
  int err = 0;
  std::string prefix;
  for (size_t i = 1; i < path.size(); ++i) {
    if (path[i] != '/') continue;
    prefix.assign(path, 0, i);
    if (::mkdir(prefix.c_str(), mode) == 0) {
      err = 0;
      continue;
    }
    err = errno;
    if (err == EEXIST) {
      err = 0;
    } else if (err != EACCES) {
      return err;
    }
  }
  return err;
}

bool rename_file(const Exchange& ex, const std::string& from, const std::string& to, const RenameOptions& o) {
  int err = 0;
  const char* call = "rename()";
  if (o.mode != 0 && (o.fd >= 0 ? ::fchmod(o.fd, o.mode) : ::chmod(from.c_str(), o.mode)) != 0) {
    log_failure(ex, true, "chmod()", from, errno);
    goto failed;
  }
  if (o.mtime >= 0) set_times(from.c_str(), o.fd, o.mtime);
  if (::rename(from.c_str(), to.c_str()) == 0) return true;
  err = errno;
  if (err == ENOENT && o.create_path) {
    if (const int e = create_parent_folders(to, o.folder_mode)) {
      log_failure(ex, true, "mkdir()", to, e);
      err = 0;
      goto failed;
    }
    if (::rename(from.c_str(), to.c_str()) == 0) return true;
    err = errno;
  }
  if (err == EXDEV) {
    // Another file system: copy beside the target under a temporary name,
    // then rename it over the target, so the target is never half written.
    static std::atomic<uint32_t> counter{0};
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, ".%010u", counter.fetch_add(1) + static_cast<uint32_t>(::getpid()));
    const std::string temp = to + suffix;
    struct stat st;
    const int64_t mtime = o.mtime >= 0 ? o.mtime : (::stat(from.c_str(), &st) == 0 ? st.st_mtim.tv_sec : -1);
    const mode_t mode = o.mode != 0 ? o.mode : (::stat(from.c_str(), &st) == 0 ? st.st_mode & 0777 : 0600);
    if (copy_file(ex, from, temp, mode, mtime)) {
      if (::rename(temp.c_str(), to.c_str()) == 0) {
        if (::unlink(from.c_str()) != 0) {
          log_failure(ex, true, "unlink()", from, errno);
          return false;
        }
        return true;
      }
      TORII_LOG_EX(ex, crit, "rename() \"%s\" to \"%s\" failed (%d: %s)%s", temp.c_str(), to.c_str(), errno, std::strerror(errno),
                http::log_context(ex).c_str());
    }
    ::unlink(temp.c_str());
    err = 0;
  }
failed:
  if (o.delete_on_failure && ::unlink(from.c_str()) != 0) log_failure(ex, true, "unlink()", from, errno);
  if (err != 0)
    TORII_LOG_EX(ex, crit, "%s \"%s\" to \"%s\" failed (%d: %s)%s", call, from.c_str(), to.c_str(), err, std::strerror(err),
              http::log_context(ex).c_str());
  return false;
}

}  // namespace torii::dav
