#include "handlers/open_file_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "core/event_loop.h"

namespace torii::handlers {

namespace {

int64_t now_steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The whole file into `out`, or nothing if it is not `size` bytes long now.
void read_content(int fd, int64_t size, http::FileBytes& out) {
  auto bytes = std::make_unique_for_overwrite<char[]>(size_t(size));
  // Shorter than its size now (changed under us): served from the descriptor.
  if (http::read_exact(fd, bytes.get(), size_t(size), 0)) out = http::FileBytes(std::move(bytes), size_t(size));
}

}  // namespace

OpenResult open_file(const std::string& path, size_t keep_content_up_to, const SymlinkPolicy& symlinks) {
  const int fd = open_with_policy(path, O_RDONLY | O_NONBLOCK, symlinks);
  if (fd < 0) return {nullptr, errno};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return {nullptr, err};
  }
  const bool is_dir = S_ISDIR(st.st_mode);
  if (!is_dir && !S_ISREG(st.st_mode)) {
    ::close(fd);
    return {nullptr, kErrNotRegularFile};
  }
  auto f = std::make_shared<http::OpenFile>();
  f->size = st.st_size;
  f->mtime = st.st_mtim.tv_sec;
  f->inode = st.st_ino;
  f->is_dir = is_dir;
  if (is_dir) {
    // Nothing reads a directory's descriptor; don't hold one per cached dir.
    ::close(fd);
  } else {
    f->fd = fd;
    if (f->size > 0 && uint64_t(f->size) <= keep_content_up_to) read_content(fd, f->size, f->content);
  }
  return {std::move(f), 0};
}

OpenResult OpenFileCache::open(const std::string& path, const config::OpenFileCache& cfg,
                               const SymlinkPolicy& symlinks) {
  if (!cfg.enabled || cfg.max == 0) return open_file(path, 0, symlinks);
  return open(path, cfg, now_steady_ms(), symlinks);
}

OpenResult OpenFileCache::open(const std::string& path, const config::OpenFileCache& cfg,
                               int64_t now_ms, const SymlinkPolicy& symlinks) {
  if (!cfg.enabled || cfg.max == 0) return open_file(path, 0, symlinks);
  expire(cfg, now_ms);

  auto found = index_.find(std::string_view(path));
  if (found != index_.end()) {
    List::iterator it = found->second;
    lru_.splice(lru_.begin(), lru_, it);  // most recently used to the front
    Entry& e = *it;
    e.last_used_ms = now_ms;
    if (e.uses < cfg.min_uses) ++e.uses;
    const bool fresh = now_ms - e.validated_ms < cfg.valid.count() && e.symlinks == symlinks;
    if (e.file) {
      if (fresh) {
        ++stats_.hits;
        return {e.file, 0};
      }
      ++stats_.revalidations;
      if (e.symlinks == symlinks && still_same(e)) {
        e.validated_ms = now_ms;
        ++stats_.hits;
        return {e.file, 0};
      }
      ++stats_.reopens;
    } else if (e.err != 0 && fresh && cfg.errors) {
      ++stats_.hits;
      return {nullptr, e.err};
    }
    // Counting uses, an error gone stale, or a changed file: open again.
    ++stats_.misses;
    const bool keep = e.uses >= cfg.min_uses;
    hold(e, nullptr);  // a changed file's bytes go (responses in flight keep theirs)
    OpenResult r = keep ? open_kept(path, symlinks) : open_file(path, 0, symlinks);
    e.validated_ms = now_ms;
    e.symlinks = symlinks;
    hold(e, (r.ok() && keep) ? r.file : nullptr);
    e.err = r.ok() ? 0 : r.err;
    if (!r.ok() && !cfg.errors) erase(it);
    return r;
  }

  ++stats_.misses;
  const bool keep = cfg.min_uses <= 1;
  OpenResult r = keep ? open_kept(path, symlinks) : open_file(path, 0, symlinks);
  if (!r.ok() && !cfg.errors) return r;
  while (lru_.size() >= cfg.max) {
    ++stats_.evictions;
    erase(std::prev(lru_.end()));
  }
  Entry e;
  e.path = path;
  e.uses = 1;
  e.last_used_ms = now_ms;
  e.validated_ms = now_ms;
  e.symlinks = symlinks;
  e.err = r.ok() ? 0 : r.err;
  if (r.ok() && keep) hold(e, r.file);
  lru_.push_front(std::move(e));
  index_.emplace(std::string_view(lru_.front().path), lru_.begin());
  return r;
}

OpenResult OpenFileCache::open_this_turn(const std::string& path, bool with_bytes, core::EventLoop& loop,
                                         const SymlinkPolicy& symlinks) {
  for (size_t i = 0; i < turn_used_; ++i)
    if (turn_[i].path == path && turn_[i].symlinks == symlinks) return {turn_[i].file, 0};
  OpenResult r = open_file(path, with_bytes ? kMaxContentBytes : 0, symlinks);
  if (!r.ok() || turn_used_ == kTurnEntries) return r;
  if (turn_used_ == 0) loop.defer([this] { forget_this_turn(); });
  if (turn_.size() == turn_used_) turn_.emplace_back();
  turn_[turn_used_].path = path;
  turn_[turn_used_].file = r.file;
  turn_[turn_used_].symlinks = symlinks;
  ++turn_used_;
  return r;
}

void OpenFileCache::forget_this_turn() {
  for (size_t i = 0; i < turn_used_; ++i) turn_[i].file.reset();  // closes what no response still holds
  turn_used_ = 0;
}

void OpenFileCache::expire(const config::OpenFileCache& cfg, int64_t now_ms) {
  // The list is in last-use order, so stale entries gather at the back.
  while (!lru_.empty() && now_ms - lru_.back().last_used_ms >= cfg.inactive.count()) {
    ++stats_.evictions;
    erase(std::prev(lru_.end()));
  }
}

void OpenFileCache::erase(List::iterator it) {
  hold(*it, nullptr);
  index_.erase(std::string_view(it->path));
  lru_.erase(it);
}

void OpenFileCache::clear() {
  index_.clear();
  lru_.clear();
  stats_.content_bytes = 0;
}

OpenResult OpenFileCache::open_kept(const std::string& path, const SymlinkPolicy& symlinks) {
  const size_t room = kContentBudget > stats_.content_bytes ? kContentBudget - stats_.content_bytes : 0;
  return open_file(path, std::min(kMaxContentBytes, room), symlinks);
}

void OpenFileCache::hold(Entry& e, std::shared_ptr<const http::OpenFile> file) {
  if (e.file) stats_.content_bytes -= e.file->content.size();
  e.file = std::move(file);
  if (e.file) stats_.content_bytes += e.file->content.size();
}

bool OpenFileCache::still_same(const Entry& e) {
  struct stat st {};
  if (e.symlinks.mode == SymlinkPolicy::Mode::off) {
    if (::stat(e.path.c_str(), &st) != 0) return false;
  } else {
    // stat() would follow a link put in the path since: walk it again.
    const int fd = open_with_policy(e.path, O_PATH, e.symlinks);
    if (fd < 0) return false;
    const bool ok = ::fstat(fd, &st) == 0;
    ::close(fd);
    if (!ok) return false;
  }
  const http::OpenFile& f = *e.file;
  return st.st_ino == f.inode && st.st_mtim.tv_sec == f.mtime && st.st_size == f.size &&
         S_ISDIR(st.st_mode) == f.is_dir;
}

}  // namespace torii::handlers
