// The servers of one session's upstream group it tries, as nginx's stream
// proxy picks them: the group's balancer chooses among the servers not
// tried yet, each try is counted in the session's facts ($upstream_addr
// and the per-try lists), and after a failure another follows while
// proxy_next_upstream, its tries (else the group's usable servers) and
// its timeout allow. Shared by the TCP and UDP sessions, which own the
// sockets; `open_upstream_socket` makes one for a try.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "stream/stream_config.h"

namespace torii::upstream {
class GroupState;
}

namespace torii::stream {

class StreamWorker;
struct Facts;

class UpstreamTries {
 public:
  UpstreamTries();
  ~UpstreamTries();
  UpstreamTries(const UpstreamTries&) = delete;
  UpstreamTries& operator=(const UpstreamTries&) = delete;

  // The group chosen (its balancer is the worker's); the hash key is
  // rendered now.
  void start(StreamWorker& w, std::shared_ptr<const Upstream> upstream, const Settings& s, const Facts& f,
             int64_t now_ms);
  // The balancer's next server, taken (its count of active sessions) and
  // counted as a try in `f`; null: none is left ("no live upstreams").
  const config::UpstreamServer* next(Facts& f, int64_t now_ms);
  // The current server failed (max_fails) or worked.
  void failed(int64_t now_ms);
  void succeeded();
  // The current server is no longer used; nothing when none is.
  void release();
  // After a failed try: whether another may follow.
  bool may_retry(const Settings& s, int64_t now_ms) const;

  bool started() const { return upstream_ != nullptr; }
  bool current() const { return peer_ >= 0; }
  int64_t first_try_ms() const { return first_try_ms_; }
  const Upstream& upstream() const { return *upstream_; }
  const config::UpstreamServer& server() const;

 private:
  std::shared_ptr<const Upstream> upstream_;
  std::shared_ptr<upstream::GroupState> balancer_;
  std::vector<uint8_t> tried_;
  std::string hash_key_;
  const sockaddr_storage* client_ = nullptr;
  int peer_ = -1;
  unsigned left_ = 0;
  int64_t first_try_ms_ = 0;
};

// A non-blocking socket of `type` (SOCK_STREAM, SOCK_DGRAM) for a try at
// `srv`, bound as proxy_bind says when the families match. -1: it could
// not be made, and `log` was told why (the session ends with 500).
using TryLog = std::function<void(config::LogLevel, const std::string&, int err)>;
int open_upstream_socket(const config::UpstreamServer& srv, int type, const Settings& s, const TryLog& log);

}  // namespace torii::stream
