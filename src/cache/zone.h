// One proxy_cache_path: its files on disk and the index of them that every
// worker thread shares. The index maps a key's MD5 to what is known of its
// entry (on disk or not, until when it is fresh, its size, how often it was
// asked for, whether a request is filling it); one mutex guards it, held
// for a lookup and a few assignments, never across I/O.
//
// A zone is taken from a process-wide registry by name and path, so a
// reload keeps the index. Its thread (started once the server runs, not by
// `torii -t`) first walks the directory to learn the entries already there
// (the loader: requests meanwhile look at the disk themselves, so entries
// are served before it ends), then evicts: entries not asked for within
// `inactive`, and the least recently used while the files exceed
// `max_size`.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "cache/entry_file.h"

namespace torii::core {
class EventLoop;
}

namespace torii::cache {

struct ZoneParams {
  std::string name;
  std::string path;    // absolute, no trailing '/'
  std::vector<int> levels;  // proxy_cache_path levels=1:2 -> {1, 2}
  size_t keys_size = 0;  // keys_zone=name:SIZE: bounds the index (nginx: ~8000 keys a megabyte)
  int64_t max_size = 0;  // 0: no limit
  int64_t min_free = 0;  // free space the file system must keep; 0: no limit
  int64_t inactive_ms = 600'000;
};

// What a lookup found.
enum class Found : uint8_t {
  fresh,     // an entry, still valid
  stale,     // an entry past its validity
  none,      // nothing usable on disk
};

// Counters for the metrics page, summed over all lookups of the zone.
struct ZoneCounters {
  std::atomic<uint64_t> hit{0}, miss{0}, expired{0}, stale{0}, updating{0}, revalidated{0}, bypass{0};
  std::atomic<uint64_t> stored{0}, evicted{0};
};

class Zone {
 public:
  // The zone for these parameters (the same object across reloads while
  // its name and path stay).
  static std::shared_ptr<Zone> acquire(const ZoneParams& p);
  // Starts every acquired zone's loader and manager thread (idempotent).
  static void start_all();

  explicit Zone(ZoneParams p);
  ~Zone();
  Zone(const Zone&) = delete;
  Zone& operator=(const Zone&) = delete;

  const ZoneParams& params() const { return params_; }
  void update(const ZoneParams& p);  // a reload may change max_size, inactive, keys_zone size

  // The file that holds (or will hold) the entry of `md5`.
  std::string file_path(const Md5& md5) const;
  // A temporary file's name in the zone's directory (the same file system,
  // so rename() moves it into place).
  std::string temp_path();

  struct Lookup {
    Found found = Found::none;
    std::shared_ptr<const Entry> entry;  // fresh or stale
    unsigned uses = 0;                   // this lookup included
    bool updating = false;               // another request fills the entry (a cache lock is held)
  };
  // Counts a use and returns what is known; reads the entry's file when
  // the index has not seen it yet (before the loader ends).
  Lookup lookup(const Md5& md5, std::string_view key, int64_t now_sec);

  // proxy_cache_lock: true when the caller may fill the entry (nobody holds
  // the lock, or it is older than `age_ms`); then it holds the lock.
  bool try_lock(const Md5& md5, int64_t age_ms);
  // Whether a request still fills the entry (a lock held and not too old).
  bool is_updating(const Md5& md5);
  // Releases the lock and wakes those waiting for it.
  void unlock(const Md5& md5);

  // A request waiting for another's fill (proxy_cache_lock): `wake` runs on
  // `loop`, its own worker's, once the lock is released (the entry stored
  // or the fill given up), unless `alive` has expired by then.
  struct LockWaiter {
    core::EventLoop* loop = nullptr;
    std::weak_ptr<void> alive;
    std::function<void()> wake;
  };
  // False, and nothing kept, when no lock is held any more.
  bool wait_for_unlock(const Md5& md5, LockWaiter waiter);

  // A file written completely was renamed into place.
  void stored(const Md5& md5, std::shared_ptr<const Entry> entry);
  // The entry's file is gone or unusable.
  void forget(const Md5& md5);
  // A 304 from the upstream renewed the entry: new validity, same body.
  void renew(const Md5& md5, std::shared_ptr<const Entry> entry) { stored(md5, std::move(entry)); }

  // proxy_cache_purge: removes the entries whose key is `key` (every
  // variant), or starts with it when `prefix`; returns how many went.
  size_t purge(std::string_view key, bool prefix);

  int64_t disk_bytes() const { return disk_bytes_.load(std::memory_order_relaxed); }
  bool loaded() const { return loaded_.load(std::memory_order_acquire); }
  ZoneCounters counters;

 private:
  struct Node {
    unsigned uses = 0;
    bool exists = false;     // a committed file is on disk
    int64_t valid_sec = 0;   // its validity
    int64_t disk = 0;        // bytes it takes on disk
    int64_t last_use_ms = 0;
    int64_t lock_until_ms = 0;  // proxy_cache_lock held until then (0: not held)
    std::shared_ptr<const Entry> entry;  // the opened file, while among the recently used
    std::list<Md5>::iterator lru;
    std::list<Md5>::iterator open_pos;  // in open_lru_ while `entry` is held
  };
  struct Md5Hash {
    size_t operator()(const Md5& m) const;
  };

  Node& node_locked(const Md5& md5, int64_t now_ms);
  void drop_locked(std::unordered_map<Md5, Node, Md5Hash>::iterator it, bool unlink_file);
  // The index keeps the opened files of the most recently used entries
  // only (each holds a descriptor): at most kMaxOpenEntries.
  void hold_entry_locked(Node& n, const Md5& md5, std::shared_ptr<const Entry> e);
  void release_entry_locked(Node& n);
  size_t max_nodes() const;
  void run();          // the zone's thread: load, then manage
  void load();         // walk the directory into the index
  void load_dir(const std::string& dir, int depth);
  void manage_once();  // evict by inactive, max_size and min_free
  void start();

  ZoneParams params_;
  std::mutex mu_;
  std::unordered_map<Md5, Node, Md5Hash> index_;
  std::list<Md5> lru_;  // most recently used first
  std::list<Md5> open_lru_;  // the nodes holding an opened entry, most recently used first
  std::unordered_map<Md5, std::vector<LockWaiter>, Md5Hash> lock_waiters_;
  std::atomic<int64_t> disk_bytes_{0};
  std::atomic<bool> loaded_{false};
  std::atomic<uint64_t> temp_counter_{0};

  std::mutex run_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool started_ = false;
  std::thread thread_;
};

}  // namespace torii::cache
