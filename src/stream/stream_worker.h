// A worker's stream side: one listening socket per stream address
// (SO_REUSEPORT, as the http ones; TCP or `udp`), the sessions, and the balancer state
// of each stream upstream group. Owned by core::Worker, on its thread.
// A reload swaps each kept socket's config in place; sessions keep the
// config they started with until they end (a graceful stop waits for them).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "config/config.h"
#include "core/event_loop.h"
#include "stream/stream_config.h"
#include "stream/variables.h"

namespace torii::core {
class Worker;
}
namespace torii::log {
class AccessLogWriter;
}
namespace torii::upstream {
class GroupState;
}
namespace torii::dns {
class Resolver;
struct ResolverConfig;
}
namespace torii::net {
class TlsSessionSlot;
}
typedef struct ssl_ctx_st SSL_CTX;

namespace torii::stream {

class Session;
class UdpListener;
class UdpSession;

class StreamWorker {
 public:
  StreamWorker(core::Worker& worker, core::EventLoop& loop, log::AccessLogWriter& access_log);
  ~StreamWorker();

  // Main thread, before the worker starts: false (logged) when one failed.
  bool open_listeners(const std::shared_ptr<const config::Config>& config);
  // The worker's thread from here on.
  void watch();
  void apply_config(const std::shared_ptr<const config::Config>& config);
  void stop_accepting();
  bool idle() const { return sessions_.empty() && udp_sessions_.empty(); }
  size_t sessions() const { return sessions_.size() + udp_sessions_.size(); }
  void close_all();

  // For sessions.
  core::EventLoop& loop() { return loop_; }
  uint64_t next_connection_id();
  std::shared_ptr<upstream::GroupState> balancer(const std::shared_ptr<const Upstream>& u);
  // The session's end: its status and time go into `f`, then its access log lines.
  void log_session(const Settings& s, Facts& f, int status);
  dns::Resolver& resolver(const dns::ResolverConfig& cfg);
  // proxy_ssl_session_reuse: the session kept for one (context, server).
  std::shared_ptr<net::TlsSessionSlot> tls_session_slot(const SSL_CTX* ctx, const std::string& server);
  void release(Session* s);
  void release(UdpSession* s);
  // A UDP listener's new client; null when worker_connections are all taken.
  UdpSession* open_udp_session(UdpListener& listener, const std::shared_ptr<const config::Config>& config,
                               const ListenGroup& group, const sockaddr_storage& peer, const sockaddr_storage& local);

 private:
  class Listener;
  class Acceptor;
  class Datagrams;
  friend class Acceptor;
  void accept(int fd, const std::shared_ptr<const config::Config>& config, const ListenGroup& group,
              const sockaddr_storage& peer);
  bool open_one(const std::shared_ptr<const config::Config>& config, const ListenGroup& group, bool watch,
                std::unordered_map<std::string, std::unique_ptr<Listener>>& into);
  void retire(std::unordered_map<std::string, std::unique_ptr<Listener>> doomed);
  static std::string listener_key(const config::Listen& l);

  core::Worker& worker_;
  core::EventLoop& loop_;
  log::AccessLogWriter& access_log_;
  std::unordered_map<std::string, std::unique_ptr<Listener>> acceptors_;  // by listener_key
  std::unordered_map<Session*, std::unique_ptr<Session>> sessions_;
  std::unordered_map<UdpSession*, std::unique_ptr<UdpSession>> udp_sessions_;
  // Balancer state per group of the current config; sessions hold theirs.
  std::unordered_map<const config::UpstreamGroupConfig*, std::shared_ptr<upstream::GroupState>> balancers_;
  std::map<std::pair<const SSL_CTX*, std::string>, std::shared_ptr<net::TlsSessionSlot>> tls_sessions_;
  std::string line_;
};

}  // namespace torii::stream
