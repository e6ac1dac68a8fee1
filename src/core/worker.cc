#include "core/worker.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cache/background.h"
#include "modules/metrics/worker_metrics.h"
#include "core/fd_budget.h"
#include "modules/mirror/mirrors.h"
#include "dns/resolver.h"
#include "core/proxy_protocol_reader.h"
#include "core/recycled.h"
#include "core/worker_placement.h"
#include "handlers/open_file_cache.h"
#include "http1/connection.h"
#include "http2/connection.h"
#include "http2/frame_blocks.h"
#include "http3/bpf_steering.h"
#include "http3/endpoint.h"
#include "log/access_log.h"
#include "log/error_log.h"
#include "modules/stub_status/counters.h"
#include "net/listener.h"
#include "net/proxy_protocol.h"
#include "net/tls_transport.h"
#include "net/transport.h"
#include "stream/stream_worker.h"
#include "upstream/upstreams.h"

namespace torii::core {

namespace {
std::atomic<uint64_t> g_connection_ids{0};
constexpr int64_t kHousekeepingMs = 1000;
constexpr int kAcceptBatch = 64;       // multi_accept on: connections per turn
constexpr int64_t kAcceptPauseMs = 500;  // no descriptor left: stop accepting this long
// Out of budget: look again this soon (descriptors may be freed by another
// worker's connections; this worker's own closes resume it at once).
constexpr int64_t kBudgetRetryMs = 50;
constexpr int64_t kBudgetLogEveryMs = 10'000;

// One warning per interval for the whole process, not one per pause.
void warn_out_of_budget(int64_t now_ms) {
  static std::atomic<int64_t> last{-kBudgetLogEveryMs};
  int64_t prev = last.load(std::memory_order_relaxed);
  if (now_ms - prev < kBudgetLogEveryMs || !last.compare_exchange_strong(prev, now_ms)) return;
  const auto& b = FdBudget::process();
  TORII_LOG(warn, "%lld of %lld descriptors in use or reserved: new connections wait in the listen queue",
            static_cast<long long>(b.in_use()), static_cast<long long>(b.limit()));
}
}  // namespace

namespace {
std::vector<Worker*> g_workers;  // written once, before any worker thread starts
}  // namespace

void set_workers(std::vector<Worker*> all) { g_workers = std::move(all); }
Worker* worker_at(size_t index) { return index < g_workers.size() ? g_workers[index] : nullptr; }
size_t worker_count() { return g_workers.size(); }

uint64_t next_connection_id() { return g_connection_ids.fetch_add(1, std::memory_order_relaxed) + 1; }

// One listening socket of this worker, registered level-triggered: what it
// leaves in the accept queue is reported again at the next turn, so it
// never needs an accept() that only says EAGAIN. With multi_accept off
// (nginx's default) it takes one connection per turn, which also keeps new
// handshakes from crowding out the connections already in progress.
class Worker::Acceptor final : public IoHandler {
 public:
  Acceptor(Worker& w, int fd, std::shared_ptr<ListenBinding> b)
      : worker_(w),
        fd_(fd),
        binding_(std::move(b)),
        events_(net::accept_events(binding_->group->listen)),
        resume_(&Acceptor::on_resume, this) {}
  ~Acceptor() override { close_listener(); }
  // Stops accepting at once. The object itself must outlive the current
  // loop turn: epoll may already have handed out an event that points here.
  void close_listener() {
    if (fd_ < 0) return;
    worker_.loop().cancel(resume_);
    worker_.loop().remove(fd_);
    close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }
  std::shared_ptr<ListenBinding>& binding() { return binding_; }
  bool watch() {
    watching_ = worker_.loop().add(fd_, this, events_, EventLoop::Trigger::level);
    return watching_;
  }
  // A connection of this worker closed: if paused for the descriptor
  // budget, look at the queue again now.
  void resume_if_waiting() {
    if (waiting_) resume();
  }

  void on_io(uint32_t) override {
    const int batch = binding_->config->multi_accept ? kAcceptBatch : 1;
    for (int i = 0; i < batch && fd_ >= 0 && !worker_.draining(); ++i) {
      if (!FdBudget::process().room_for_connection()) {
        wait_for_descriptors();
        return;
      }
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      int fd = accept4(fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) pause(errno);
        return;  // EAGAIN: the queue is empty
      }
      worker_.accept_connection(fd, binding_, peer);
    }
  }

 private:
  // Out of descriptors: the queue stays readable, and a level-triggered
  // listener would spin. Stop watching it for a while (as nginx does).
  void pause(int err) {
    TORII_LOG(crit, "accept4() failed (%d: %s)", err, strerror(err));
    stop_watching();
    worker_.loop().arm(resume_, kAcceptPauseMs);
  }
  static void on_resume(void* self) { static_cast<Acceptor*>(self)->resume(); }

  // The budget is spent: the connections queue in the kernel (the client
  // sees a slow connect, not an error) until descriptors are given back.
  void wait_for_descriptors() {
    warn_out_of_budget(worker_.loop().now_ms());
    stop_watching();
    waiting_ = true;
    worker_.loop().arm(resume_, kBudgetRetryMs);
    // Keep-alive connections would otherwise hold their descriptors while
    // these wait: the waiting ones could never get in.
    worker_.reclaim_idle_connections();
  }
  void resume() {
    waiting_ = false;
    worker_.loop().cancel(resume_);
    if (fd_ < 0) return;
    if (events_ & EPOLLEXCLUSIVE) {
      if (!watching_) watch();
    } else {
      worker_.loop().modify(fd_, this, events_, EventLoop::Trigger::level);
    }
  }
  // An EPOLLEXCLUSIVE registration cannot be modified: it is removed, and
  // added again on resume.
  void stop_watching() {
    if (events_ & EPOLLEXCLUSIVE) {
      worker_.loop().remove(fd_);
      watching_ = false;
    } else {
      worker_.loop().modify(fd_, this, 0, EventLoop::Trigger::level);
    }
  }

  Worker& worker_;
  int fd_;
  std::shared_ptr<ListenBinding> binding_;
  const uint32_t events_;  // net::accept_events
  bool watching_ = false;
  Timer resume_;
  bool waiting_ = false;  // paused for the descriptor budget
};

Worker::Worker(int index, std::shared_ptr<const config::Config> config)
    : index_(index),
      config_(std::move(config)),
      open_files_(std::make_unique<handlers::OpenFileCache>()),
      access_log_(std::make_unique<log::AccessLogWriter>()),
      housekeeping_([](void* self) { static_cast<Worker*>(self)->on_housekeeping(); }, this),
      shutdown_deadline_([](void* self) { static_cast<Worker*>(self)->on_shutdown_timeout(); }, this) {
  services_.open_files = open_files_.get();
  upstreams_ = std::make_unique<upstream::Upstreams>(loop_);
  upstreams_->use_config(*config_);
  services_.loop = &loop_;
  services_.upstreams = upstreams_.get();
  resolvers_ = std::make_unique<dns::Resolvers>(loop_);
  services_.resolvers = resolvers_.get();
  cache_updates_ = std::make_unique<cache::BackgroundUpdates>(loop_);
  services_.cache_updates = cache_updates_.get();
  mirrors_ = std::make_unique<mirror::Mirrors>(loop_);
  services_.mirrors = mirrors_.get();
  stream_ = std::make_unique<stream::StreamWorker>(*this, loop_, *access_log_);
}

Worker::~Worker() {
  stream_.reset();
  quic_endpoints_.clear();
  retired_endpoints_.clear();
  h2_connections_.clear();
  connections_.clear();
  proxy_readers_.clear();
  acceptors_.clear();
  cache_updates_.reset();
  mirrors_.reset();
  upstreams_.reset();
  resolvers_.reset();
}

bool Worker::open_listeners() {
  bool ok = true;
  auto cfg = config_;
  for (const auto& group : cfg->listen_groups) {
    if (group.udp && !open_quic_endpoint(group, cfg, quic_endpoints_, false)) ok = false;
    if (group.listen.quic) continue;  // UDP only
    auto fd = net::open_listener(group.listen);
    if (!fd) {
      TORII_LOG(emerg, "%s", fd.error().c_str());
      ok = false;
      continue;
    }
    auto binding = std::make_shared<ListenBinding>();
    binding->config = cfg;
    binding->group = &group;
    acceptors_[group.listen.text] = std::make_unique<Acceptor>(*this, *fd, std::move(binding));
  }
  if (!stream_->open_listeners(cfg)) ok = false;
  return ok;
}

void Worker::start() {
  thread_ = std::thread([this] {
    metrics::bind_worker(index_);
    place_worker_thread(config_->process, index_);
    for (auto& [name, a] : acceptors_) a->watch();
    for (auto& [name, e] : quic_endpoints_) e->watch();
    stream_->watch();
    loop_.arm(housekeeping_, kHousekeepingMs);
    loop_.run();
    access_log_->flush(true);
    stream_->close_all();
    quic_endpoints_.clear();
    retired_endpoints_.clear();
    h2_connections_.clear();
    connections_.clear();
    proxy_readers_.clear();
    acceptors_.clear();
    cache_updates_.reset();
    mirrors_.reset();
    upstreams_.reset();  // idle upstream connections close on this thread
    resolvers_.reset();  // and so do the name servers' sockets
  });
}

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::reload(std::shared_ptr<const config::Config> config) {
  loop_.post([this, config = std::move(config)]() mutable { apply_config(std::move(config)); });
}

void Worker::stop(bool graceful) {
  loop_.post([this, graceful] {
    if (graceful) {
      begin_drain();
    } else {
      loop_.stop();
    }
  });
}

void Worker::reopen_logs() {
  loop_.post([this] { access_log_->reopen(); });
}

// New config: keep sockets whose address stays, open new ones, retire the
// rest. Connections pick the new config up at their next request.
bool Worker::open_quic_endpoint(const config::ListenGroup& group, const std::shared_ptr<const config::Config>& config,
                                EndpointMap& into, bool watch) {
  auto fd = http3::open_udp_listener(group.listen);
  if (!fd) {
    TORII_LOG(emerg, "%s", fd.error().c_str());
    return false;
  }
  auto binding = std::make_shared<ListenBinding>();
  binding->config = config;
  binding->group = &group;
  auto e = std::make_unique<http3::Endpoint>(*this, *fd, std::move(binding));
  if (config->quic_bpf) steer_quic(*e, *config);
  if (watch) e->watch();
  into[http3::Endpoint::key_for(group.listen)] = std::move(e);
  return true;
}

void Worker::steer_quic(http3::Endpoint& e, const config::Config& config) {
  const size_t workers = std::max(size_t(config.worker_processes), worker_count());
  http3::steer_by_connection_id(e.address_key(), e.fd(), size_t(index_), workers);
}

void Worker::hand_quic_datagram(std::string address, std::shared_ptr<http3::HandedDatagram> d) {
  loop_.post([this, address = std::move(address), d = std::move(d)] {
    // The socket for that address, or one retired by a reload that still
    // carries connections: whichever knows the connection ID takes it.
    auto it = quic_endpoints_.find(address);
    if (it != quic_endpoints_.end() && it->second->take_handed(*d)) return;
    for (auto& [name, e] : retired_endpoints_)
      if (e->address_key() == address && e->take_handed(*d)) return;
    // Gone: answered here as any unknown ID is (a stateless reset).
    if (it != quic_endpoints_.end())
      it->second->handle_datagram(d->bytes.data(), d->bytes.size(), d->peer, d->peer_len, d->local, d->local_len);
  });
}

void Worker::apply_config(std::shared_ptr<const config::Config> config) {
  config_ = config;
  place_worker_thread(config->process, index_);
  upstreams_->use_config(*config);  // the old config's idle upstream connections move on or close
  stream_->apply_config(config);    // stream sessions keep the config they started with
  // QUIC: a kept address swaps its binding in place (connections keep the
  // settings they started with; new streams take the new config); a gone
  // one stops taking connections and finishes those it has.
  EndpointMap next_quic;
  for (const auto& group : config->listen_groups) {
    if (!group.udp) continue;
    const std::string key = http3::Endpoint::key_for(group.listen);
    auto it = quic_endpoints_.find(key);
    if (it != quic_endpoints_.end()) {
      auto& b = *it->second->binding();
      b.config = config;
      b.group = &group;
      next_quic[key] = std::move(it->second);
      quic_endpoints_.erase(it);
      continue;
    }
    open_quic_endpoint(group, config, next_quic, true);
  }
  for (auto& [name, e] : quic_endpoints_) {
    e->binding()->retired = true;
    e->drain();
    retired_endpoints_[name + " #" + std::to_string(reinterpret_cast<uintptr_t>(e.get()))] = std::move(e);
  }
  quic_endpoints_ = std::move(next_quic);
  // quic_bpf: every kept socket takes its slot in the map again (the new
  // ones took theirs when opened); off: the kernel's hash alone.
  for (auto& [name, e] : quic_endpoints_) {
    if (config->quic_bpf) {
      steer_quic(*e, *config);
    } else {
      http3::stop_steering(e->fd());
    }
  }

  std::unordered_map<std::string, std::unique_ptr<Acceptor>> next;
  for (const auto& group : config->listen_groups) {
    if (group.listen.quic) continue;
    auto it = acceptors_.find(group.listen.text);
    if (it != acceptors_.end()) {
      // Swap the binding's contents in place: live connections share it.
      auto& b = *it->second->binding();
      b.config = config;
      b.group = &group;
      next[group.listen.text] = std::move(it->second);
      acceptors_.erase(it);
      continue;
    }
    auto fd = net::open_listener(group.listen);
    if (!fd) {
      TORII_LOG(emerg, "%s", fd.error().c_str());
      continue;
    }
    auto binding = std::make_shared<ListenBinding>();
    binding->config = config;
    binding->group = &group;
    auto a = std::make_unique<Acceptor>(*this, *fd, std::move(binding));
    a->watch();
    next[group.listen.text] = std::move(a);
  }
  for (auto& [name, a] : acceptors_) a->binding()->retired = true;
  retire_acceptors(std::move(acceptors_));
  acceptors_ = std::move(next);
  for (auto& [c, owned] : connections_) {
    (void)owned;
    if (c->idle_on_retired()) c->drain();
  }
  // HTTP/2 on a retired address: GOAWAY, streams in flight finish.
  std::vector<http2::Connection*> retired;
  for (auto& [c, owned] : h2_connections_)
    if (c->on_retired()) retired.push_back(c);
  for (auto* c : retired) c->drain();
}

void Worker::accept_connection(int fd, const std::shared_ptr<ListenBinding>& binding, const sockaddr_storage& peer) {
  if (live_connections_ >= config_->worker_connections) {
    TORII_LOG(alert, "%u worker_connections are not enough", config_->worker_connections);
    stub_status::add(stub_status::Counter::accepted, 1);
    close(fd);
    return;
  }
  stub_status::add(stub_status::Counter::accepted, 1);
  stub_status::add(stub_status::Counter::handled, 1);
  connection_opened();
  if (binding->group->listen.proxy_protocol) {
    // The header comes first, before TLS and HTTP.
    auto reader = std::make_unique<ProxyProtocolReader>(*this, fd, binding, peer);
    auto* raw = reader.get();
    proxy_readers_.emplace(raw, std::move(reader));
    raw->start();
    return;
  }
  start_connection(fd, binding, peer, nullptr);
}

void Worker::adopt_connection(int fd, const std::shared_ptr<ListenBinding>& binding, const sockaddr_storage& peer,
                              std::shared_ptr<const net::ProxyProtocolAddrs> addrs, ProxyProtocolReader* reader) {
  loop_.defer([this, reader] { proxy_readers_.erase(reader); });
  start_connection(fd, binding, peer, std::move(addrs));
}

void Worker::release(ProxyProtocolReader* r) {
  connection_closed();
  loop_.defer([this, r] {
    proxy_readers_.erase(r);
    check_drained();
  });
}

void Worker::start_connection(int fd, const std::shared_ptr<ListenBinding>& binding, const sockaddr_storage& peer,
                              std::shared_ptr<const net::ProxyProtocolAddrs> addrs) {
  std::unique_ptr<net::Transport> transport;
  if (binding->group->listen.ssl) {
    transport = std::make_unique<net::TlsTransport>(fd, binding->config, *binding->group);
  } else {
    transport = std::make_unique<net::PlainTransport>(fd);
  }
  auto conn = std::make_unique<http1::Connection>(*this, std::move(transport), peer, binding, std::move(addrs));
  auto* raw = conn.get();
  connections_.emplace(raw, std::move(conn));
  raw->start();
}

void Worker::connection_opened() {
  ++live_connections_;
  memory_return_.note(live_connections_);
  stub_status::add(stub_status::Counter::active, 1);
  FdBudget::process().add(FdBudget::kPerConnection);
}

void Worker::connection_closed() {
  --live_connections_;
  stub_status::add(stub_status::Counter::active, -1);
  FdBudget::process().add(-FdBudget::kPerConnection);
  for (auto& [name, a] : acceptors_) a->resume_if_waiting();
}

void Worker::release(http1::Connection* c) {
  connection_closed();
  loop_.defer([this, c] {
    connections_.erase(c);
    check_drained();
  });
}

void Worker::start_http2(std::unique_ptr<net::Transport> transport, const http::ConnectionInfo& info,
                         const std::shared_ptr<ListenBinding>& binding, std::string received) {
  auto conn = std::make_unique<http2::Connection>(*this, std::move(transport), info, binding, std::move(received));
  auto* raw = conn.get();
  h2_connections_.emplace(raw, std::move(conn));
  connection_opened();
  metrics::record_connection(metrics::conn_h2);
  raw->start();
}

void Worker::release(http2::Connection* c) {
  connection_closed();
  loop_.defer([this, c] {
    h2_connections_.erase(c);
    check_drained();
  });
}

void Worker::reclaim_idle_connections() {
  // Once per retry interval: a pass visits every connection.
  if (loop_.now_ms() - last_reclaim_ms_ < kBudgetRetryMs / 2) return;
  last_reclaim_ms_ = loop_.now_ms();
  std::vector<http1::Connection*> live;
  for (auto& [c, owned] : connections_) live.push_back(c);
  for (auto* c : live) c->end_keepalive();
}

void Worker::begin_drain() {
  if (draining_) return;
  draining_ = true;
  retire_acceptors(std::move(acceptors_));  // stop accepting: close our listening sockets
  acceptors_.clear();
  stream_->stop_accepting();  // stream sessions run on until they end
  std::vector<ProxyProtocolReader*> readers;
  for (auto& [r, owned] : proxy_readers_) readers.push_back(r);
  for (auto* r : readers) r->abandon();  // nothing asked yet: close
  std::vector<http1::Connection*> live;
  for (auto& [c, owned] : connections_) live.push_back(c);
  for (auto* c : live) c->drain();
  std::vector<http2::Connection*> live2;
  for (auto& [c, owned] : h2_connections_) live2.push_back(c);
  for (auto* c : live2) c->drain();
  // QUIC: GOAWAY on every connection; the sockets stay until they end.
  for (auto& [name, e] : quic_endpoints_) {
    e->drain();
    retired_endpoints_[name] = std::move(e);
  }
  quic_endpoints_.clear();
  if (config_->worker_shutdown_timeout_ms > 0) loop_.arm(shutdown_deadline_, config_->worker_shutdown_timeout_ms);
  check_drained();
}

// worker_shutdown_timeout ran out with connections still open: they are
// closed as a fast stop closes them.
void Worker::on_shutdown_timeout() {
  TORII_LOG(notice, "worker_shutdown_timeout: closing %zu connections still open",
            connections_.size() + h2_connections_.size() + stream_->sessions());
  loop_.stop();
}

void Worker::retire_acceptors(AcceptorMap doomed) {
  for (auto& [name, a] : doomed) a->close_listener();
  // Destroyed at the end of the turn: an event of this turn may name them.
  auto held = std::make_shared<AcceptorMap>(std::move(doomed));
  loop_.defer([held] {});
}

void Worker::check_drained() {
  if (!draining_ || !connections_.empty() || !h2_connections_.empty() || !proxy_readers_.empty() || !stream_->idle())
    return;
  for (auto& [name, e] : retired_endpoints_)
    if (e->connections() > 0) return;
  loop_.stop();
}

void Worker::on_housekeeping() {
  access_log_->flush(false);
  // Retired QUIC sockets whose last connection has ended.
  for (auto it = retired_endpoints_.begin(); it != retired_endpoints_.end();) {
    if (it->second->connections() == 0 && !draining_) {
      auto held = std::make_shared<std::unique_ptr<http3::Endpoint>>(std::move(it->second));
      loop_.defer([held] {});
      it = retired_endpoints_.erase(it);
    } else {
      ++it;
    }
  }
  upstreams_->prune();
  if (memory_return_.due(live_connections_, net::TlsTransport::take_released_buffers())) {
    http2::FrameBlocks::local().release_idle();
    drain_recycled_blocks();
    const long us = return_freed_memory();
    TORII_LOG(debug, "connections fell to %zu: freed memory returned (malloc_trim: %ld us of CPU)",
              live_connections_, us);
  }
  loop_.arm(housekeeping_, kHousekeepingMs);
}

}  // namespace torii::core
