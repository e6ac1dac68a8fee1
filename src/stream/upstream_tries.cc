#include "stream/upstream_tries.h"

#include <unistd.h>

#include <cerrno>

#include "stream/stream_worker.h"
#include "stream/variables.h"
#include "upstream/group_state.h"
#include "upstream/local_bind.h"

namespace torii::stream {

UpstreamTries::UpstreamTries() = default;
UpstreamTries::~UpstreamTries() { release(); }

void UpstreamTries::start(StreamWorker& w, std::shared_ptr<const Upstream> upstream, const Settings& s, const Facts& f,
                          int64_t now_ms) {
  upstream_ = std::move(upstream);
  balancer_ = w.balancer(upstream_);
  const auto& servers = upstream_->group->servers;
  tried_.assign(servers.size(), 0);
  unsigned usable = 0;
  for (const auto& srv : servers) usable += srv.down ? 0 : 1;
  left_ = usable ? usable : 1;
  if (s.next_upstream_tries && left_ > s.next_upstream_tries) left_ = s.next_upstream_tries;
  if (!upstream_->hash_key.parts.empty()) render(upstream_->hash_key, f, hash_key_);
  client_ = &f.peer;
  first_try_ms_ = now_ms;
}

const config::UpstreamServer* UpstreamTries::next(Facts& f, int64_t now_ms) {
  upstream::PickInput in;
  in.client = client_;
  in.hash_key = hash_key_;
  const int peer = balancer_->pick(in, tried_, now_ms);
  if (peer < 0) return nullptr;
  const auto& srv = upstream_->group->servers[size_t(peer)];
  peer_ = peer;
  tried_[size_t(peer)] = 1;
  --left_;
  balancer_->acquire(peer);
  f.upstream_addr.push_back(srv.name);
  f.upstream_connect_ms.push_back(-1);
  f.upstream_first_byte_ms.push_back(-1);
  f.upstream_session_ms.push_back(-1);
  f.upstream_bytes_sent.push_back(0);
  f.upstream_bytes_received.push_back(0);
  return &srv;
}

void UpstreamTries::failed(int64_t now_ms) {
  if (peer_ >= 0) balancer_->failed(peer_, now_ms);
}

void UpstreamTries::succeeded() {
  if (peer_ >= 0) balancer_->succeeded(peer_);
}

void UpstreamTries::release() {
  if (peer_ >= 0) balancer_->release(peer_);
  peer_ = -1;
}

bool UpstreamTries::may_retry(const Settings& s, int64_t now_ms) const {
  const int64_t spent = now_ms - first_try_ms_;
  return left_ > 0 && s.next_upstream && !(s.next_upstream_timeout.count() && spent >= s.next_upstream_timeout.count());
}

const config::UpstreamServer& UpstreamTries::server() const { return upstream_->group->servers[size_t(peer_)]; }

int open_upstream_socket(const config::UpstreamServer& srv, int type, const Settings& s, const TryLog& log) {
  const int fd = ::socket(srv.addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    log(config::LogLevel::alert, "socket() failed", errno);
    return -1;
  }
  if (s.bind && srv.addr.ss_family == s.bind->addr.ss_family) {
    upstream::BindFailure failure;
    if (!upstream::bind_local(fd, s.bind->addr, s.bind->addr_len, s.bind->transparent, s.bind->name, failure)) {
      log(failure.level, failure.what, failure.err);
      ::close(fd);
      return -1;
    }
  }
  return fd;
}

}  // namespace torii::stream
