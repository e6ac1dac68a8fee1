#include "cache/zone.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <vector>

#include "config/config.h"
#include "core/event_loop.h"
#include "log/error_log.h"

namespace torii::cache {

namespace {

constexpr size_t kKeysPerMegabyte = 8000;  // nginx's documented figure
constexpr int64_t kManageEveryMs = 1000;
constexpr char kTempPrefix[] = ".tmp-";
constexpr size_t kMaxOpenEntries = 256;  // descriptors a zone keeps open for its hits

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::mutex registry_mu;
std::map<std::pair<std::string, std::string>, std::shared_ptr<Zone>>& registry() {
  static std::map<std::pair<std::string, std::string>, std::shared_ptr<Zone>> r;
  return r;
}

bool is_hex_name(const char* name) {
  if (std::strlen(name) != 32) return false;
  for (const char* p = name; *p; ++p)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return false;
  return true;
}

bool parse_hex(const char* name, Md5& out) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < 16; ++i) out[i] = uint8_t(nibble(name[2 * i]) << 4 | nibble(name[2 * i + 1]));
  return true;
}

void make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0700);
  }
}

}  // namespace

size_t Zone::Md5Hash::operator()(const Md5& m) const {
  size_t h = 0;
  std::memcpy(&h, m.data(), sizeof h);
  return h;
}

std::shared_ptr<Zone> Zone::acquire(const ZoneParams& p) {
  std::lock_guard lock(registry_mu);
  auto& slot = registry()[{p.name, p.path}];
  if (slot) {
    slot->update(p);
    return slot;
  }
  slot = std::make_shared<Zone>(p);
  return slot;
}

void Zone::start_all() {
  std::lock_guard lock(registry_mu);
  for (auto& [name, zone] : registry()) zone->start();
}

Zone::Zone(ZoneParams p) : params_(std::move(p)) {}

Zone::~Zone() {
  {
    std::lock_guard lock(run_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Zone::update(const ZoneParams& p) {
  std::lock_guard lock(mu_);
  params_.keys_size = p.keys_size;
  params_.max_size = p.max_size;
  params_.min_free = p.min_free;
  params_.inactive_ms = p.inactive_ms;
}

void Zone::start() {
  std::lock_guard lock(run_mu_);
  if (started_) return;
  started_ = true;
  make_dirs(params_.path);
  thread_ = std::thread([this] { run(); });
}

std::string Zone::file_path(const Md5& md5) const {
  // levels=1:2: ".../c/29/b7f54b2df7773722d382f4809d65029c", the levels
  // taken from the end of the name, as nginx lays them out.
  const std::string name = hex(md5);
  std::string path = params_.path;
  size_t end = name.size();
  for (int len : params_.levels) {
    path += '/';
    path.append(name, end - size_t(len), size_t(len));
    end -= size_t(len);
  }
  path += '/';
  path += name;
  return path;
}

std::string Zone::temp_path() {
  // The process id in the name lets the loader of a later process remove
  // what a killed one left, and never a file being written now.
  return params_.path + "/" + kTempPrefix + std::to_string(::getpid()) + "-" +
         std::to_string(temp_counter_.fetch_add(1, std::memory_order_relaxed));
}

size_t Zone::max_nodes() const {
  return std::max<size_t>(64, params_.keys_size / (1024 * 1024 / kKeysPerMegabyte));
}

Zone::Node& Zone::node_locked(const Md5& md5, int64_t now_ms) {
  auto [it, fresh] = index_.try_emplace(md5);
  Node& n = it->second;
  if (fresh) {
    lru_.push_front(md5);
    n.lru = lru_.begin();
    // The index is full: the least recently used key goes (its file too),
    // unless a request is filling it.
    while (index_.size() > max_nodes()) {
      auto victim = index_.find(lru_.back());
      if (victim == it || victim->second.lock_until_ms > now_ms) break;
      drop_locked(victim, true);
    }
  } else {
    lru_.splice(lru_.begin(), lru_, n.lru);
  }
  n.last_use_ms = now_ms;
  return n;
}

void Zone::hold_entry_locked(Node& n, const Md5& md5, std::shared_ptr<const Entry> e) {
  if (n.entry) {
    open_lru_.splice(open_lru_.begin(), open_lru_, n.open_pos);
  } else {
    open_lru_.push_front(md5);
    n.open_pos = open_lru_.begin();
  }
  n.entry = std::move(e);
  while (open_lru_.size() > kMaxOpenEntries) {
    auto victim = index_.find(open_lru_.back());
    victim->second.entry = nullptr;  // read again from its file when next asked for
    open_lru_.pop_back();
  }
}

void Zone::release_entry_locked(Node& n) {
  if (!n.entry) return;
  open_lru_.erase(n.open_pos);
  n.entry = nullptr;
}

void Zone::drop_locked(std::unordered_map<Md5, Node, Md5Hash>::iterator it, bool unlink_file) {
  release_entry_locked(it->second);
  if (it->second.exists) {
    disk_bytes_.fetch_sub(it->second.disk, std::memory_order_relaxed);
    if (unlink_file) {
      ::unlink(file_path(it->first).c_str());
      counters.evicted.fetch_add(1, std::memory_order_relaxed);
    }
  }
  lru_.erase(it->second.lru);
  index_.erase(it);
}

Zone::Lookup Zone::lookup(const Md5& md5, std::string_view key, int64_t now_sec) {
  const int64_t now_ms = steady_ms();
  Lookup out;
  bool read_disk = false;
  {
    std::lock_guard lock(mu_);
    Node& n = node_locked(md5, now_ms);
    ++n.uses;
    out.uses = n.uses;
    out.updating = n.lock_until_ms > now_ms;
    if (n.exists && n.entry) {
      out.entry = n.entry;
      open_lru_.splice(open_lru_.begin(), open_lru_, n.open_pos);
    } else if (n.exists || !loaded()) {
      read_disk = true;  // known to be there but not opened, or not known yet
    }
  }
  if (read_disk) {
    const std::string path = file_path(md5);
    bool bad = false;
    auto entry = read_entry(path, bad);
    if (bad) {
      log::write(config::LogLevel::crit, "cache file \"%s\" is not valid, removed", path.c_str());
      ::unlink(path.c_str());
    }
    std::lock_guard lock(mu_);
    auto it = index_.find(md5);
    if (it != index_.end()) {
      Node& n = it->second;
      if (entry) {
        if (!n.exists) disk_bytes_.fetch_add(entry->disk_bytes(), std::memory_order_relaxed);
        else disk_bytes_.fetch_add(entry->disk_bytes() - n.disk, std::memory_order_relaxed);
        n.exists = true;
        n.disk = entry->disk_bytes();
        n.valid_sec = entry->valid_sec;
        hold_entry_locked(n, md5, entry);
        out.entry = entry;
      } else if (n.exists) {
        disk_bytes_.fetch_sub(n.disk, std::memory_order_relaxed);
        n.exists = false;
        n.disk = 0;
        release_entry_locked(n);
      }
    }
  }
  if (out.entry && out.entry->key != key) {
    // Two keys with one MD5: not this request's response.
    log::write(config::LogLevel::crit, "cache file \"%s\" has md5 collision", file_path(md5).c_str());
    out.entry = nullptr;
  }
  if (out.entry) out.found = out.entry->valid_sec > now_sec ? Found::fresh : Found::stale;
  return out;
}

bool Zone::try_lock(const Md5& md5, int64_t age_ms) {
  const int64_t now_ms = steady_ms();
  std::lock_guard lock(mu_);
  Node& n = node_locked(md5, now_ms);
  if (n.lock_until_ms > now_ms) return false;
  n.lock_until_ms = now_ms + std::max<int64_t>(age_ms, 1);
  return true;
}

bool Zone::is_updating(const Md5& md5) {
  std::lock_guard lock(mu_);
  auto it = index_.find(md5);
  return it != index_.end() && it->second.lock_until_ms > steady_ms();
}

void Zone::unlock(const Md5& md5) {
  std::vector<LockWaiter> waiters;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(md5);
    if (it != index_.end()) it->second.lock_until_ms = 0;
    auto w = lock_waiters_.find(md5);
    if (w != lock_waiters_.end()) {
      waiters = std::move(w->second);
      lock_waiters_.erase(w);
    }
  }
  // One post per worker thread, outside the zone's mutex.
  while (!waiters.empty()) {
    core::EventLoop* loop = waiters.front().loop;
    std::vector<LockWaiter> same;
    std::erase_if(waiters, [&](LockWaiter& w) {
      if (w.loop != loop) return false;
      same.push_back(std::move(w));
      return true;
    });
    loop->post([same = std::move(same)] {
      for (const auto& w : same)
        if (!w.alive.expired()) w.wake();
    });
  }
}

bool Zone::wait_for_unlock(const Md5& md5, LockWaiter waiter) {
  std::lock_guard lock(mu_);
  auto it = index_.find(md5);
  if (it == index_.end() || it->second.lock_until_ms <= steady_ms()) return false;
  auto& list = lock_waiters_[md5];
  // Those whose request ended go now, so a long-held lock keeps few.
  std::erase_if(list, [](const LockWaiter& w) { return w.alive.expired(); });
  list.push_back(std::move(waiter));
  return true;
}

void Zone::stored(const Md5& md5, std::shared_ptr<const Entry> entry) {
  counters.stored.fetch_add(1, std::memory_order_relaxed);
  bool over = false;
  {
    std::lock_guard lock(mu_);
    Node& n = node_locked(md5, steady_ms());
    disk_bytes_.fetch_add(entry->disk_bytes() - (n.exists ? n.disk : 0), std::memory_order_relaxed);
    n.exists = true;
    n.disk = entry->disk_bytes();
    n.valid_sec = entry->valid_sec;
    hold_entry_locked(n, md5, std::move(entry));
    over = params_.max_size > 0 && disk_bytes_.load(std::memory_order_relaxed) > params_.max_size;
  }
  if (over) wake_.notify_one();  // the manager evicts now rather than at its next round
}

void Zone::forget(const Md5& md5) {
  std::lock_guard lock(mu_);
  auto it = index_.find(md5);
  if (it == index_.end() || !it->second.exists) return;
  disk_bytes_.fetch_sub(it->second.disk, std::memory_order_relaxed);
  it->second.exists = false;
  it->second.disk = 0;
  release_entry_locked(it->second);
}

size_t Zone::purge(std::string_view key, bool prefix) {
  // The keys are in the files: list the entries under the lock, read the
  // keys not known yet without it, then remove the matches under it.
  std::vector<std::pair<Md5, std::shared_ptr<const Entry>>> entries;
  {
    std::lock_guard lock(mu_);
    for (const auto& [md5, n] : index_)
      if (n.exists) entries.emplace_back(md5, n.entry);
  }
  size_t removed = 0;
  if (!prefix) {
    // Not in the index yet (the loader has not reached it): on disk all the same.
    const Md5 md5 = md5_of(key);
    bool bad = false;
    auto e = read_entry(file_path(md5), bad);
    if (e && e->key == key && ::unlink(file_path(md5).c_str()) == 0) {
      forget(md5);
      ++removed;
    }
  }
  for (auto& [md5, entry] : entries) {
    if (!entry) {
      bool bad = false;
      entry = read_entry(file_path(md5), bad);
      if (!entry) continue;
    }
    const bool match = prefix ? entry->key.compare(0, key.size(), key) == 0 : entry->key == key;
    if (!match) continue;
    std::lock_guard lock(mu_);
    auto it = index_.find(md5);
    if (it == index_.end() || !it->second.exists) continue;
    drop_locked(it, false);
    ::unlink(file_path(md5).c_str());
    ++removed;
  }
  return removed;
}

// ---- the zone's thread -------------------------------------------------------

void Zone::run() {
  load();
  std::unique_lock lock(run_mu_);
  while (!stopping_) {
    lock.unlock();
    manage_once();
    lock.lock();
    wake_.wait_for(lock, std::chrono::milliseconds(kManageEveryMs));
  }
}

void Zone::load() {
  load_dir(params_.path, 0);
  loaded_.store(true, std::memory_order_release);
  if (log::enabled(config::LogLevel::notice)) {
    std::lock_guard lock(mu_);
    log::write(config::LogLevel::notice, "cache \"%s\": %zu entries, %lld bytes loaded", params_.name.c_str(),
               index_.size(), static_cast<long long>(disk_bytes()));
  }
}

void Zone::load_dir(const std::string& dir, int depth) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> subdirs;
  while (dirent* ent = ::readdir(d)) {
    {
      std::lock_guard lock(run_mu_);
      if (stopping_) break;
    }
    const char* name = ent->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    const std::string path = dir + "/" + name;
    if (depth == 0 && std::strncmp(name, kTempPrefix, sizeof kTempPrefix - 1) == 0) {
      // A temporary file a killed process left (never this process's own).
      const std::string mine = std::string(kTempPrefix) + std::to_string(::getpid()) + "-";
      if (std::strncmp(name, mine.c_str(), mine.size()) != 0) ::unlink(path.c_str());
      continue;
    }
    if (depth < int(params_.levels.size())) {
      subdirs.push_back(path);
      continue;
    }
    if (!is_hex_name(name)) continue;
    EntrySummary sum;
    if (!read_summary(path, sum)) {
      ::unlink(path.c_str());  // torn or foreign: never served
      continue;
    }
    Md5 md5{};
    parse_hex(name, md5);
    std::lock_guard lock(mu_);
    auto [it, fresh] = index_.try_emplace(md5);
    Node& n = it->second;
    if (fresh) {
      lru_.push_back(md5);  // loaded entries are the least recently used
      n.lru = std::prev(lru_.end());
      n.last_use_ms = steady_ms();
    }
    if (!n.exists) {
      n.exists = true;
      n.disk = sum.disk_bytes;
      n.valid_sec = sum.valid_sec;
      disk_bytes_.fetch_add(sum.disk_bytes, std::memory_order_relaxed);
    }
  }
  ::closedir(d);
  for (const auto& sub : subdirs) load_dir(sub, depth + 1);
}

void Zone::manage_once() {
  const int64_t now_ms = steady_ms();
  std::lock_guard lock(mu_);
  // Not asked for within `inactive`: removed, fresh or not.
  while (!lru_.empty()) {
    auto it = index_.find(lru_.back());
    if (now_ms - it->second.last_use_ms < params_.inactive_ms || it->second.lock_until_ms > now_ms) break;
    drop_locked(it, true);
  }
  // What must go for max_size, and for min_free: the file system's free
  // space (as an unprivileged writer sees it) below it is made up from the
  // cache, as nginx's manager does.
  int64_t excess = params_.max_size > 0 ? disk_bytes_.load(std::memory_order_relaxed) - params_.max_size : 0;
  if (params_.min_free > 0) {
    struct statvfs fs{};
    if (::statvfs(params_.path.c_str(), &fs) == 0)
      excess = std::max(excess, params_.min_free - int64_t(fs.f_bavail) * int64_t(fs.f_frsize));
  }
  if (excess <= 0) return;
  // The least recently used go first.
  const int64_t goal = disk_bytes_.load(std::memory_order_relaxed) - excess;
  auto pos = lru_.end();
  while (disk_bytes_.load(std::memory_order_relaxed) > goal && pos != lru_.begin()) {
    --pos;
    auto it = index_.find(*pos);
    if (!it->second.exists || it->second.lock_until_ms > now_ms) continue;
    auto next = pos;
    ++next;
    drop_locked(it, true);
    pos = next;
  }
}

}  // namespace torii::cache
