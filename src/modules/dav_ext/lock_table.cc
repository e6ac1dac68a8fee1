#include "modules/dav_ext/lock_table.h"

#include <bit>
#include <map>
#include <random>
#include <utility>

#include "log/error_log.h"

namespace torii::dav_ext {

namespace {

std::mutex registry_mu;
std::map<std::pair<std::string, size_t>, std::weak_ptr<LockTable>>& registry() {
  static auto* r = new std::map<std::pair<std::string, size_t>, std::weak_ptr<LockTable>>;
  return *r;
}

// A lock's cost in the zone: nginx's node (queue links, token, expiry,
// depth, length: about 48 bytes) and the URI, in a slab chunk of the next
// power of two. The pool's own pages and headers take about a tenth.
size_t lock_cost(size_t uri_len) { return std::bit_ceil(48 + uri_len); }
size_t capacity(size_t zone_size) { return zone_size - zone_size / 10; }

bool has_slash(std::string_view s) { return s.find('/') != std::string_view::npos; }

// Whether `lock` constrains `uri`: it is the URI's own, or a folder's
// above it (the URI a direct member, or any depth under an infinite
// lock), or, with `reach`, one below the folder `uri` names.
bool constrains(const Lock& lock, std::string_view uri, Reach reach) {
  const std::string_view root = lock.root;
  if (uri.size() >= root.size()) {
    if (!uri.starts_with(root)) return false;
    if (uri.size() == root.size()) return true;
    if (root.back() != '/') return false;
    // What lies between the root and the URI's last byte: a '/' there
    // makes the URI deeper than a direct member.
    return lock.infinite || !has_slash(uri.substr(root.size(), uri.size() - root.size() - 1));
  }
  if (reach == Reach::none || !root.starts_with(uri) || uri.back() != '/') return false;
  return reach == Reach::subtree || !has_slash(root.substr(uri.size(), root.size() - uri.size() - 1));
}

}  // namespace

std::shared_ptr<LockTable> LockTable::acquire(const std::string& name, size_t size) {
  std::lock_guard lock(registry_mu);
  auto& slot = registry()[{name, size}];
  if (auto t = slot.lock()) return t;
  auto t = std::make_shared<LockTable>(name, size);
  slot = t;
  return t;
}

void LockTable::expire(int64_t now) {
  // Oldest first, as the module's queue: it stops at the first that lives.
  while (!locks_.empty() && locks_.front().expire < now) erase(locks_.begin());
}

std::list<Lock>::iterator LockTable::lookup(std::string_view uri, Reach reach) {
  if (uri.empty()) return locks_.end();
  for (auto it = locks_.begin(); it != locks_.end(); ++it)
    if (constrains(*it, uri, reach)) return it;
  return locks_.end();
}

void LockTable::erase(std::list<Lock>::iterator it) {
  used_ -= lock_cost(it->root.size());
  locks_.erase(it);
}

std::optional<Lock> LockTable::find(std::string_view uri, Reach reach, int64_t now) {
  std::lock_guard lock(mu_);
  expire(now);
  auto it = lookup(uri, reach);
  if (it == locks_.end()) return std::nullopt;
  return *it;
}

int LockTable::verify(std::string_view uri, uint32_t offered, bool drop_root, int64_t now) {
  std::lock_guard lock(mu_);
  expire(now);
  auto it = lookup(uri, Reach::none);
  if (it == locks_.end()) return 0;
  if (offered == 0) return 423;
  if (offered != it->token) return 412;
  // RFC 4918 7.5: a lock whose root no longer maps to anything goes with it.
  if (drop_root && it->root.size() == uri.size()) erase(it);
  return 0;
}

LockTable::Granted LockTable::lock(std::string_view uri, bool infinite, uint32_t offered, uint32_t new_token,
                                   int64_t timeout_s, int64_t now) {
  std::lock_guard lock(mu_);
  expire(now);
  auto it = lookup(uri, infinite ? Reach::subtree : Reach::members);
  if (it != locks_.end()) {
    if (offered == 0) return {423, false, 0};
    if (offered != it->token) return {412, false, 0};
    it->expire = now + timeout_s;
    locks_.splice(locks_.end(), locks_, it);
    return {0, true, offered};
  }
  const size_t cost = lock_cost(uri.size());
  if (used_ + cost > capacity(size_)) {
    TORII_LOG(crit, "ngx_slab_alloc() failed: no memory in dav_ext zone \"%s\"", name_.c_str());
    return {500, false, 0};
  }
  used_ += cost;
  locks_.push_back(Lock{std::string(uri), new_token, now + timeout_s, infinite});
  return {0, false, new_token};
}

void LockTable::remove(std::string_view uri, uint32_t token) {
  std::lock_guard lock(mu_);
  for (auto it = locks_.begin(); it != locks_.end(); ++it) {
    if (it->root == uri && it->token == token) {
      erase(it);
      return;
    }
  }
}

void LockTable::unlock(std::string_view uri, uint32_t token, int64_t now) {
  std::lock_guard lock(mu_);
  expire(now);
  auto it = lookup(uri, Reach::none);
  if (it != locks_.end() && it->token == token) erase(it);
}

uint32_t new_lock_token() {
  thread_local std::mt19937 rng = [] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937(seq);
  }();
  uint32_t t = 0;
  while (t == 0) t = static_cast<uint32_t>(rng());
  return t;
}

}  // namespace torii::dav_ext
