// TLS 1.3 early data (0-RTT) is accepted at most once per ticket in this
// process. Tickets themselves stay reusable (stateless, so every worker and
// every machine with the same ticket keys resumes them); only the early
// data, which the client sends before the handshake proves it is live, is
// refused the second time: a replayed ClientHello then costs a round trip
// instead of running its request again. Shared by every worker thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace torii::net {

class TlsReplayGuard {
 public:
  // The one guard of this process.
  static TlsReplayGuard& process();

  explicit TlsReplayGuard(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // True the first time `ticket` (the resumed session's id) brings early
  // data; it is then remembered until `expires` (unix seconds), after which
  // the ticket cannot resume anyway. False for a ticket seen before, and
  // when the guard is full of live tickets (the client then sends its
  // request after the handshake: slower, never unsafe).
  bool first_use(std::string_view ticket, int64_t expires, int64_t now);

  size_t size() const;

 private:
  void drop_expired(int64_t now);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, int64_t> seen_;   // ticket -> expires
  std::multimap<int64_t, std::string> by_expiry_;  // the same, soonest first
};

}  // namespace torii::net
