#include "net/tls_replay_guard.h"

namespace torii::net {

namespace {

// About 100 bytes each: a few MB at most, however many clients use 0-RTT.
constexpr size_t kProcessCapacity = 64 * 1024;

}  // namespace

TlsReplayGuard& TlsReplayGuard::process() {
  static TlsReplayGuard guard(kProcessCapacity);
  return guard;
}

bool TlsReplayGuard::first_use(std::string_view ticket, int64_t expires, int64_t now) {
  std::lock_guard lock(mu_);
  drop_expired(now);
  std::string key(ticket);
  if (seen_.count(key) != 0) return false;
  if (seen_.size() >= capacity_) return false;
  seen_.emplace(key, expires);
  by_expiry_.emplace(expires, std::move(key));
  return true;
}

size_t TlsReplayGuard::size() const {
  std::lock_guard lock(mu_);
  return seen_.size();
}

void TlsReplayGuard::drop_expired(int64_t now) {
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
    seen_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
}

}  // namespace torii::net
