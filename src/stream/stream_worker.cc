#include "stream/stream_worker.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/fd_budget.h"
#include "core/worker.h"
#include "dns/resolver.h"
#include "log/access_log.h"
#include "log/error_log.h"
#include "modules/stub_status/counters.h"
#include "net/datagram_listener.h"
#include "net/listener.h"
#include "net/tls_client.h"
#include "stream/session.h"
#include "stream/session_log.h"
#include "stream/udp_listener.h"
#include "stream/udp_session.h"
#include "upstream/group_state.h"

namespace torii::stream {

// A listening socket of either kind, as the worker keeps and swaps them.
class StreamWorker::Listener {
 public:
  virtual ~Listener() = default;
  virtual bool watch() = 0;
  virtual void rebind(std::shared_ptr<const config::Config> config, const ListenGroup* group) = 0;
  virtual void close_listener() = 0;
};

// One listening TCP socket, level-triggered like the http acceptors:
// a connection per turn (a batch with multi_accept), and what it leaves is
// reported again at the next turn.
class StreamWorker::Acceptor final : public core::IoHandler, public StreamWorker::Listener {
 public:
  Acceptor(StreamWorker& w, int fd, std::shared_ptr<const config::Config> config, const ListenGroup* group)
      : w_(w), fd_(fd), config_(std::move(config)), group_(group) {}
  ~Acceptor() override { close_listener(); }
  void close_listener() override {
    if (fd_ < 0) return;
    w_.loop_.remove(fd_);
    ::close(fd_);
    fd_ = -1;
  }
  bool watch() override {
    return w_.loop_.add(fd_, this, net::accept_events(group_->listen), core::EventLoop::Trigger::level);
  }
  void rebind(std::shared_ptr<const config::Config> config, const ListenGroup* group) override {
    config_ = std::move(config);
    group_ = group;
  }

  void on_io(uint32_t) override {
    const int batch = config_->multi_accept ? 64 : 1;
    for (int i = 0; i < batch && fd_ >= 0; ++i) {
      if (!core::FdBudget::process().room_for_connection()) return;  // waits in the listen queue
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      const int fd = accept4(fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      w_.accept(fd, config_, *group_, peer);
    }
  }

 private:
  StreamWorker& w_;
  int fd_;
  std::shared_ptr<const config::Config> config_;
  const ListenGroup* group_;
};

// A `listen ... udp` socket: the UdpListener, as the worker holds listeners.
class StreamWorker::Datagrams final : public StreamWorker::Listener {
 public:
  Datagrams(StreamWorker& w, int fd, std::shared_ptr<const config::Config> config, const ListenGroup* group)
      : udp_(w, fd, std::move(config), group) {}
  bool watch() override { return udp_.watch(); }
  void rebind(std::shared_ptr<const config::Config> config, const ListenGroup* group) override {
    udp_.rebind(std::move(config), group);
  }
  void close_listener() override { udp_.close_listener(); }

 private:
  UdpListener udp_;
};

StreamWorker::StreamWorker(core::Worker& worker, core::EventLoop& loop, log::AccessLogWriter& access_log)
    : worker_(worker), loop_(loop), access_log_(access_log) {}

StreamWorker::~StreamWorker() { close_all(); }

void StreamWorker::close_all() {
  udp_sessions_.clear();  // each leaves its listener first
  sessions_.clear();
  acceptors_.clear();
}

std::string StreamWorker::listener_key(const config::Listen& l) { return l.udp ? "udp " + l.text : l.text; }

bool StreamWorker::open_one(const std::shared_ptr<const config::Config>& config, const ListenGroup& group, bool watch,
                            std::unordered_map<std::string, std::unique_ptr<Listener>>& into) {
  auto fd = group.listen.udp ? net::open_datagram_listener(group.listen) : net::open_listener(group.listen);
  if (!fd) {
    TORII_LOG(emerg, "%s", fd.error().c_str());
    return false;
  }
  std::unique_ptr<Listener> a;
  if (group.listen.udp) {
    a = std::make_unique<Datagrams>(*this, *fd, config, &group);
  } else {
    a = std::make_unique<Acceptor>(*this, *fd, config, &group);
  }
  if (watch) a->watch();
  into[listener_key(group.listen)] = std::move(a);
  return true;
}

bool StreamWorker::open_listeners(const std::shared_ptr<const config::Config>& config) {
  if (!config->stream) return true;
  bool ok = true;
  for (const auto& g : config->stream->listen_groups)
    if (!open_one(config, g, false, acceptors_)) ok = false;
  return ok;
}

void StreamWorker::watch() {
  for (auto& [name, a] : acceptors_) a->watch();
}

void StreamWorker::apply_config(const std::shared_ptr<const config::Config>& config) {
  balancers_.clear();  // the new groups start fresh; sessions keep the state they hold
  tls_sessions_.clear();  // the new config has new contexts
  std::unordered_map<std::string, std::unique_ptr<Listener>> next;
  if (config->stream) {
    for (const auto& g : config->stream->listen_groups) {
      auto it = acceptors_.find(listener_key(g.listen));
      if (it != acceptors_.end()) {
        it->second->rebind(config, &g);
        next[listener_key(g.listen)] = std::move(it->second);
        acceptors_.erase(it);
        continue;
      }
      open_one(config, g, true, next);
    }
  }
  retire(std::move(acceptors_));
  acceptors_ = std::move(next);
}

void StreamWorker::stop_accepting() {
  retire(std::move(acceptors_));
  acceptors_.clear();
}

void StreamWorker::retire(std::unordered_map<std::string, std::unique_ptr<Listener>> doomed) {
  for (auto& [name, a] : doomed) a->close_listener();
  // Freed at the end of the turn: an event of this turn may name one.
  auto held = std::make_shared<decltype(doomed)>(std::move(doomed));
  loop_.defer([held] {});
}

void StreamWorker::accept(int fd, const std::shared_ptr<const config::Config>& config, const ListenGroup& group,
                          const sockaddr_storage& peer) {
  stub_status::add(stub_status::Counter::accepted, 1);
  if (worker_.at_connection_limit()) {
    TORII_LOG(alert, "%u worker_connections are not enough", config->worker_connections);
    ::close(fd);
    return;
  }
  stub_status::add(stub_status::Counter::handled, 1);
  stub_status::add(stub_status::Counter::active, 1);
  worker_.count_connection(1);
  core::FdBudget::process().add(core::FdBudget::kPerConnection);
  auto s = std::make_unique<Session>(*this, fd, config, group, peer);
  Session* raw = s.get();
  sessions_.emplace(raw, std::move(s));
  raw->start();
}

void StreamWorker::release(Session* s) {
  stub_status::add(stub_status::Counter::active, -1);
  worker_.count_connection(-1);
  core::FdBudget::process().add(-core::FdBudget::kPerConnection);
  loop_.defer([this, s] {
    sessions_.erase(s);
    worker_.check_drained();
  });
}

UdpSession* StreamWorker::open_udp_session(UdpListener& listener, const std::shared_ptr<const config::Config>& config,
                                           const ListenGroup& group, const sockaddr_storage& peer,
                                           const sockaddr_storage& local) {
  stub_status::add(stub_status::Counter::accepted, 1);
  if (worker_.at_connection_limit()) {
    TORII_LOG(alert, "%u worker_connections are not enough", config->worker_connections);
    return nullptr;
  }
  stub_status::add(stub_status::Counter::handled, 1);
  stub_status::add(stub_status::Counter::active, 1);
  worker_.count_connection(1);
  core::FdBudget::process().add(core::FdBudget::kPerConnection);
  auto s = std::make_unique<UdpSession>(*this, listener, config, group, peer, local);
  UdpSession* raw = s.get();
  udp_sessions_.emplace(raw, std::move(s));
  return raw;
}

void StreamWorker::release(UdpSession* s) {
  stub_status::add(stub_status::Counter::active, -1);
  worker_.count_connection(-1);
  core::FdBudget::process().add(-core::FdBudget::kPerConnection);
  loop_.defer([this, s] {
    udp_sessions_.erase(s);
    worker_.check_drained();
  });
}

dns::Resolver& StreamWorker::resolver(const dns::ResolverConfig& cfg) { return worker_.services().resolvers->get(cfg); }

std::shared_ptr<net::TlsSessionSlot> StreamWorker::tls_session_slot(const SSL_CTX* ctx, const std::string& server) {
  auto& slot = tls_sessions_[{ctx, server}];
  if (!slot) slot = std::make_shared<net::TlsSessionSlot>();
  return slot;
}

uint64_t StreamWorker::next_connection_id() { return core::next_connection_id(); }

std::shared_ptr<upstream::GroupState> StreamWorker::balancer(const std::shared_ptr<const Upstream>& u) {
  // A group proxy_pass $var made for one session is not kept.
  if (u->per_session) return std::make_shared<upstream::GroupState>(*u->group);
  auto& slot = balancers_[u->group.get()];
  if (!slot) slot = std::make_shared<upstream::GroupState>(*u->group);
  return slot;
}

void StreamWorker::log_session(const Settings& s, Facts& f, int status) {
  f.status = status;
  f.now_ms = loop_.now_ms();
  if (s.access_log_off) return;
  for (const AccessLog& al : s.access_logs) {
    if (al.condition) {
      std::string value;
      render(*al.condition, f, value);
      if (value.empty() || value == "0") continue;
    }
    line_.clear();
    for (const auto& p : al.format->format.parts) {
      if (!p.is_variable) {
        line_.append(p.literal);
        continue;
      }
      const size_t mark = line_.size();
      if (!render_variable(p, f, line_)) {
        line_.resize(mark);
        if (!al.format->json_escape && !al.format->escape_none) line_.push_back('-');
        continue;
      }
      if (!al.format->escape_none) log::escape_log_value(line_, mark, al.format->json_escape);
    }
    line_.push_back('\n');
    if (al.path_template) {
      std::string path;
      render(*al.path_template, f, path);
      const log::NamedFileError failed = log::append_to_named_file(std::move(path), al.prefix, line_);
      if (!failed.text.empty())
        log_session_summary(s, f.connection, failed.alert ? config::LogLevel::alert : config::LogLevel::error, failed.text);
      continue;
    }
    access_log_.append_line(al.path, al.syslog.get(), al.buffering, line_);
  }
}

}  // namespace torii::stream
