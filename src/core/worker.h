// A worker: one thread, one event loop, its own listening sockets (one per
// address, SO_REUSEPORT), its connections and per-thread services (open
// file cache, access log buffers). Other threads reach it only through
// post(): reload, stop, reopen.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/event_loop.h"
#include "core/memory_return.h"
#include "http/exchange.h"

namespace torii::log {
class AccessLogWriter;
}
namespace torii::handlers {
class OpenFileCache;
}
namespace torii::http1 {
class Connection;
}
namespace torii::upstream {
class Upstreams;
}
namespace torii::http2 {
class Connection;
}
namespace torii::dns {
class Resolvers;
}
namespace torii::net {
class Transport;
}
namespace torii::http3 {
class Endpoint;
struct HandedDatagram;
}
namespace torii::net {
struct ProxyProtocolAddrs;
}
namespace torii::stream {
class StreamWorker;
}

namespace torii::core {

class ProxyProtocolReader;

// The config a listening address serves under. Connections hold it so a
// keep-alive connection picks up a reload at its next request; `retired`
// means the address left the config, so connections close when idle.
struct ListenBinding {
  std::shared_ptr<const config::Config> config;
  const config::ListenGroup* group = nullptr;
  bool retired = false;
};

class Worker {
 public:
  Worker(int index, std::shared_ptr<const config::Config> config);
  ~Worker();

  // Opens this worker's listening sockets; false (with errors logged) if any
  // failed. Called before start(), on the main thread.
  bool open_listeners();
  void start();
  void join();

  // From any thread.
  void reload(std::shared_ptr<const config::Config> config);
  void stop(bool graceful);
  void reopen_logs();
  // A QUIC datagram another worker's socket received for a connection this
  // worker owns (the client's address changed, so the kernel's SO_REUSEPORT
  // hash sent it elsewhere). `address` is the listen address it came to.
  void hand_quic_datagram(std::string address, std::shared_ptr<http3::HandedDatagram> d);

  // From the worker's own thread.
  EventLoop& loop() { return loop_; }
  http::WorkerServices& services() { return services_; }
  log::AccessLogWriter& access_log() { return *access_log_; }
  void accept_connection(int fd, const std::shared_ptr<ListenBinding>& binding, const sockaddr_storage& peer);
  // A `listen ... proxy_protocol` connection whose header has been read
  // (addrs: none for UNKNOWN or LOCAL) starts its HTTP/1 (or TLS) life.
  void adopt_connection(int fd, const std::shared_ptr<ListenBinding>& binding, const sockaddr_storage& peer,
                        std::shared_ptr<const net::ProxyProtocolAddrs> addrs, ProxyProtocolReader* reader);
  void release(ProxyProtocolReader* r);
  // The connection is closed; it is destroyed at the end of this loop turn.
  void release(http1::Connection* c);
  // An HTTP/1 connection that saw the h2c preface or negotiated "h2" hands
  // its transport (and the bytes it read) over to an HTTP/2 connection.
  void start_http2(std::unique_ptr<net::Transport> transport, const http::ConnectionInfo& info,
                   const std::shared_ptr<ListenBinding>& binding, std::string received);
  void release(http2::Connection* c);
  bool draining() const { return draining_; }
  // Out of descriptors with connections waiting to be accepted: keep-alive
  // ends on this worker's HTTP/1 connections (see end_keepalive()), so the
  // waiting clients get their turn as the others reconnect.
  void reclaim_idle_connections();
  int index() const { return index_; }
  // worker_connections counts TCP and QUIC connections alike.
  bool at_connection_limit() const { return live_connections_ >= config_->worker_connections; }
  void count_connection(int delta) { live_connections_ = size_t(int64_t(live_connections_) + delta); }
  // A connection ended: during a graceful stop, the last one stops the loop.
  void check_drained();
  void on_shutdown_timeout();

 private:
  class Acceptor;
  void apply_config(std::shared_ptr<const config::Config> config);
  // Live connection counts, the process's descriptor budget with them.
  void connection_opened();
  void connection_closed();
  void begin_drain();
  // quic_bpf: the kernel delivers this socket's connections' datagrams to it.
  void steer_quic(http3::Endpoint& e, const config::Config& config);
  bool open_quic_endpoint(const config::ListenGroup& group, const std::shared_ptr<const config::Config>& config,
                          std::unordered_map<std::string, std::unique_ptr<http3::Endpoint>>& into, bool watch);
  void on_housekeeping();

  int index_;
  std::shared_ptr<const config::Config> config_;
  EventLoop loop_;
  std::thread thread_;
  std::unique_ptr<handlers::OpenFileCache> open_files_;
  std::unique_ptr<log::AccessLogWriter> access_log_;
  std::unique_ptr<upstream::Upstreams> upstreams_;  // groups' state and keep-alive pools
  std::unique_ptr<dns::Resolvers> resolvers_;       // `resolver` name servers and their caches
  std::unique_ptr<cache::BackgroundUpdates> cache_updates_;  // before upstreams_ at the end: they hold its connections
  std::unique_ptr<mirror::Mirrors> mirrors_;                 // likewise
  std::unique_ptr<stream::StreamWorker> stream_;  // stream {}: its listeners and sessions
  http::WorkerServices services_;
  using AcceptorMap = std::unordered_map<std::string, std::unique_ptr<Acceptor>>;
  void retire_acceptors(AcceptorMap doomed);
  AcceptorMap acceptors_;  // by address text
  std::unordered_map<http1::Connection*, std::unique_ptr<http1::Connection>> connections_;
  // Connections still sending their PROXY protocol header.
  std::unordered_map<ProxyProtocolReader*, std::unique_ptr<ProxyProtocolReader>> proxy_readers_;
  void start_connection(int fd, const std::shared_ptr<ListenBinding>& binding, const sockaddr_storage& peer,
                        std::shared_ptr<const net::ProxyProtocolAddrs> addrs);
  std::unordered_map<http2::Connection*, std::unique_ptr<http2::Connection>> h2_connections_;
  // UDP sockets answering QUIC, by address; each owns its connections.
  using EndpointMap = std::unordered_map<std::string, std::unique_ptr<http3::Endpoint>>;
  EndpointMap quic_endpoints_;
  EndpointMap retired_endpoints_;  // left the config or stopping: kept until their connections end
  size_t live_connections_ = 0;  // open ones; closed ones wait for the turn's end
  bool draining_ = false;
  int64_t last_reclaim_ms_ = -1'000'000;  // reclaim_idle_connections()' last pass
  MemoryReturn memory_return_;  // freed memory back to the kernel after a crowd left
  Timer housekeeping_;
  Timer shutdown_deadline_;  // worker_shutdown_timeout, armed by a graceful stop
};

// The process's workers by index, set by main before they start and fixed
// for the process's life, so one can hand another the work that is its own.
void set_workers(std::vector<Worker*> all);
Worker* worker_at(size_t index);  // nullptr past the end
size_t worker_count();

// Connection ids ($connection) are unique across workers.
uint64_t next_connection_id();

}  // namespace torii::core
