// The locks of one dav_ext_lock_zone: exclusive write locks, each on a URI
// (a folder's ends in '/') with a token, an expiry and a depth (0: the
// folder and its direct members; infinity: everything below it). One
// table per zone name and size for the whole process, shared by every
// worker thread under its mutex and kept across reloads, as nginx keeps
// the zone's shared memory. Every call drops the locks that have expired
// first; the zone's size bounds what it holds, as nginx's slab pool does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace torii::dav_ext {

struct Lock {
  std::string root;  // the URI locked (the lockroot)
  uint32_t token = 0;
  int64_t expire = 0;  // unix seconds
  bool infinite = false;
};

// A lookup's reach below the URI asked for: none (only locks on the URI or
// above it count), a folder's direct members, or everything under it.
enum class Reach : uint8_t { none, members, subtree };

class LockTable {
 public:
  static std::shared_ptr<LockTable> acquire(const std::string& name, size_t size);
  LockTable(std::string name, size_t size) : name_(std::move(name)), size_(size) {}

  // The lock that constrains `uri` (a copy), if any.
  std::optional<Lock> find(std::string_view uri, Reach reach, int64_t now);

  // What a method that changes `uri` may do, given the token its If
  // header offered (0: none): go on (no lock, or the lock's own token),
  // 423 (locked, no token), 412 (another token). `drop_root`: a lock whose
  // root is `uri` itself goes, the resource leaving its URI (DELETE, MOVE).
  int verify(std::string_view uri, uint32_t offered, bool drop_root, int64_t now);

  struct Granted {
    int status = 0;  // 0: granted; else 423, 412, or 500 (the zone is full)
    bool refreshed = false;  // an existing lock's time was renewed
    uint32_t token = 0;
  };
  // LOCK: a new lock on `uri` with `new_token`, or, when a lock already
  // covers it and `offered` is its token, that lock renewed.
  Granted lock(std::string_view uri, bool infinite, uint32_t offered, uint32_t new_token, int64_t timeout_s,
               int64_t now);

  // Removes the lock whose root is `uri` and whose token is `token` (a
  // LOCK that could not create its file takes its lock back).
  void remove(std::string_view uri, uint32_t token);

  // UNLOCK: removes the lock constraining `uri` when `token` is its own.
  void unlock(std::string_view uri, uint32_t token, int64_t now);

  size_t size() const { return size_; }

 private:
  // With mu_ held.
  void expire(int64_t now);
  std::list<Lock>::iterator lookup(std::string_view uri, Reach reach);
  void erase(std::list<Lock>::iterator it);

  std::string name_;
  size_t size_;
  std::mutex mu_;
  std::list<Lock> locks_;  // oldest expiry first: a renewed lock moves to the back
  size_t used_ = 0;        // the bytes the locks would take in nginx's slab pool
};

// A new lock token: random, never 0 (0 means "no token").
uint32_t new_lock_token();

}  // namespace torii::dav_ext
