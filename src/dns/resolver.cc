#include "dns/resolver.h"

#include <ares.h>
#include <sys/epoll.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>

#include "log/error_log.h"

namespace torii::dns {

namespace {

// A failed lookup is remembered this long (nginx's default for errors),
// unless valid= says otherwise, so a name that does not resolve does not
// send one query per request.
constexpr int64_t kErrorCacheMs = 30'000;
// A cache that grows past this is swept of expired answers.
constexpr size_t kCacheSweepAt = 4096;

int state_of(int ares_status) {
  switch (ares_status) {
    case ARES_SUCCESS: return 0;
    case ARES_EFORMERR: return 1;
    case ARES_ESERVFAIL: return 2;
    case ARES_ENOTFOUND:
    case ARES_ENODATA:
    case ARES_ENONAME: return 3;
    case ARES_ENOTIMP: return 4;
    case ARES_EREFUSED: return 5;
    default: return kTimedOut;  // no answer came: ETIMEOUT, ECONNREFUSED...
  }
}

void init_library() {
  static std::once_flag once;
  std::call_once(once, [] { ares_library_init(ARES_LIB_INIT_ALL); });
}

}  // namespace

const char* state_text(int state) {
  switch (state) {
    case 1: return "Format error";
    case 2: return "Server failure";
    case 3: return "Host not found";
    case 4: return "Unimplemented";
    case 5: return "Operation refused";
    case kTimedOut: return "Operation timed out";
    default: return "Unknown error";
  }
}

// ---- Lookup ----------------------------------------------------------------------

Lookup::Lookup(core::EventLoop& loop, Callback cb) : loop_(loop), cb_(std::move(cb)), timer_(&on_timeout, this) {}

Lookup::~Lookup() { loop_.cancel(timer_); }

void Lookup::on_timeout(void* self) {
  Answer a;
  a.state = kTimedOut;
  static_cast<Lookup*>(self)->deliver(a);
}

// The callback may drop the last reference to this Lookup: it is moved
// out first, so it lives until it returns.
void Lookup::deliver(const Answer& a) {
  loop_.cancel(timer_);
  Callback cb = std::move(cb_);
  cb_ = nullptr;
  if (cb) cb(a);
}

// ---- c-ares sockets on the event loop --------------------------------------------

// One socket c-ares opened. Level-triggered: c-ares reads what it wants
// per call, and whatever it leaves is reported again.
class Resolver::Socket : public core::IoHandler {
 public:
  Socket(Resolver& r, int fd) : r_(r), fd_(fd) {}
  void on_io(uint32_t events) override {
    if (closed) return;
    const bool readable = events & (EPOLLIN | EPOLLERR | EPOLLHUP);
    const bool writable = events & EPOLLOUT;
    r_.process(readable ? fd_ : ARES_SOCKET_BAD, writable ? fd_ : ARES_SOCKET_BAD);
  }
  bool closed = false;

 private:
  Resolver& r_;
  int fd_;
};

void Resolver::on_sock_state(void* data, int fd, int readable, int writable) {
  auto* r = static_cast<Resolver*>(data);
  auto it = r->sockets_.find(fd);
  if (!readable && !writable) {
    if (it == r->sockets_.end()) return;
    r->loop_.remove(fd);
    // c-ares closes the socket; the handler may be the one running now, so
    // it goes at the end of the turn.
    it->second->closed = true;
    std::shared_ptr<Socket> doomed(it->second.release());
    r->sockets_.erase(it);
    r->loop_.defer([doomed] {});
    return;
  }
  uint32_t events = (readable ? EPOLLIN : 0u) | (writable ? EPOLLOUT : 0u);
  if (it == r->sockets_.end()) {
    auto s = std::make_unique<Socket>(*r, fd);
    if (!r->loop_.add(fd, s.get(), events, core::EventLoop::Trigger::level))
      TORII_LOG(alert, "resolver: epoll_ctl() failed for a name server socket");
    r->sockets_.emplace(fd, std::move(s));
  } else {
    r->loop_.modify(fd, it->second.get(), events, core::EventLoop::Trigger::level);
  }
}

// ---- Resolver --------------------------------------------------------------------

// What c-ares carries for one query: the resolver may be destroyed first
// (ares_destroy then reports ARES_EDESTRUCTION, which only frees this).
struct Resolver::Query {
  Resolver* resolver;
  std::string name;
};

Resolver::Resolver(core::EventLoop& loop, const ResolverConfig& cfg)
    : loop_(loop), cfg_(cfg), timer_(&on_timer, this) {
  init_library();
  ares_options opts{};
  int mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_FLAGS | ARES_OPT_LOOKUPS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;
  opts.sock_state_cb = &on_sock_state;
  opts.sock_state_cb_data = this;
  // As nginx's resolver: the name as given (no search domains, no
  // HOSTALIASES), asked of the configured servers only (no /etc/hosts).
  opts.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
  opts.lookups = const_cast<char*>("b");
  opts.timeout = 2000;  // per try; the request's resolver_timeout bounds the wait
  opts.tries = 3;
  ares_channel ch = nullptr;
  int rc = ares_init_options(&ch, &opts, mask);
  if (rc != ARES_SUCCESS) {
    TORII_LOG(alert, "resolver: ares_init_options() failed (%s)", ares_strerror(rc));
    return;
  }
  channel_ = ch;
  std::string csv;
  for (const auto& s : cfg_.servers) {
    if (!csv.empty()) csv += ',';
    csv += s;
  }
  rc = ares_set_servers_ports_csv(channel_, csv.c_str());
  if (rc != ARES_SUCCESS) {
    TORII_LOG(alert, "resolver: ares_set_servers_ports_csv(\"%s\") failed (%s)", csv.c_str(), ares_strerror(rc));
    return;
  }
  ok_ = true;
}

Resolver::~Resolver() {
  loop_.cancel(timer_);
  if (channel_) ares_destroy(channel_);  // closes its sockets through on_sock_state
  for (auto& [fd, s] : sockets_) loop_.remove(fd);
}

const Answer* Resolver::cached(const std::string& name) {
  auto it = cache_.find(name);
  if (it == cache_.end()) return nullptr;
  if (it->second.expires_ms <= loop_.now_ms()) {
    cache_.erase(it);
    return nullptr;
  }
  return &it->second.answer;
}

std::shared_ptr<Lookup> Resolver::resolve(const std::string& name, int64_t timeout_ms, Lookup::Callback cb) {
  auto lookup = std::make_shared<Lookup>(loop_, std::move(cb));
  loop_.arm(lookup->timer_, std::max<int64_t>(timeout_ms, 1));
  auto& waiters = waiting_[name];
  waiters.push_back(lookup);
  if (waiters.size() > 1) return lookup;  // a query for it is on its way
  if (!ok_) {
    loop_.defer([this, name] { finish(name, Answer{kTimedOut, {}, 0}, kErrorCacheMs); });
    return lookup;
  }
  ares_addrinfo_hints hints{};
  hints.ai_family = cfg_.ipv4 && cfg_.ipv6 ? AF_UNSPEC : cfg_.ipv6 ? AF_INET6 : AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = ARES_AI_NOSORT;
  // c-ares may answer inside this call: on_answer tells the waiters at
  // the end of the turn either way.
  auto* q = new Query{this, name};
  ares_getaddrinfo(channel_, name.c_str(), nullptr, &hints, &on_answer, q);
  rearm();
  return lookup;
}

void Resolver::on_answer(void* arg, int status, int, ares_addrinfo* result) {
  std::unique_ptr<Query> q(static_cast<Query*>(arg));
  if (status == ARES_EDESTRUCTION) {
    if (result) ares_freeaddrinfo(result);
    return;
  }
  Answer a;
  a.state = state_of(status);
  int64_t ttl_ms = INT64_MAX;
  if (result) {
    for (ares_addrinfo_node* n = result->nodes; n; n = n->ai_next) {
      if (!n->ai_addr || n->ai_addrlen > sizeof(sockaddr_storage)) continue;
      Address ad;
      std::memcpy(&ad.addr, n->ai_addr, n->ai_addrlen);
      ad.len = n->ai_addrlen;
      bool dup = std::any_of(a.addrs.begin(), a.addrs.end(), [&](const Address& o) {
        return o.len == ad.len && std::memcmp(&o.addr, &ad.addr, ad.len) == 0;
      });
      if (!dup) a.addrs.push_back(ad);
      ttl_ms = std::min<int64_t>(ttl_ms, int64_t(std::max(n->ai_ttl, 0)) * 1000);
    }
    ares_freeaddrinfo(result);
  }
  if (a.state == 0 && a.addrs.empty()) a.state = 3;
  if (a.state != 0) ttl_ms = kErrorCacheMs;
  if (ttl_ms == INT64_MAX) ttl_ms = 0;
  Resolver* r = q->resolver;
  std::string name = std::move(q->name);
  // Never tell waiters from inside c-ares: a waiter may start a request
  // that asks this resolver again.
  r->loop_.defer([r, name, a, ttl_ms]() mutable { r->finish(name, std::move(a), ttl_ms); });
}

void Resolver::finish(const std::string& name, Answer answer, int64_t ttl_ms) {
  if (cfg_.valid.count() > 0) ttl_ms = cfg_.valid.count();
  if (cache_.size() >= kCacheSweepAt) {
    const int64_t now = loop_.now_ms();
    std::erase_if(cache_, [now](const auto& kv) { return kv.second.expires_ms <= now; });
  }
  answer.expires_ms = loop_.now_ms() + ttl_ms;
  // TTL 0 still answers the requests that waited for it.
  if (ttl_ms > 0) cache_[name] = Entry{answer, answer.expires_ms};
  auto it = waiting_.find(name);
  if (it == waiting_.end()) return;
  std::vector<std::weak_ptr<Lookup>> waiters = std::move(it->second);
  waiting_.erase(it);
  for (auto& w : waiters)
    if (auto l = w.lock()) l->deliver(answer);
}

void Resolver::process(int read_fd, int write_fd) {
  ares_process_fd(channel_, read_fd, write_fd);
  rearm();
}

void Resolver::on_timer(void* self) {
  auto* r = static_cast<Resolver*>(self);
  r->process(ARES_SOCKET_BAD, ARES_SOCKET_BAD);  // lets c-ares retransmit or give up
}

// c-ares' next retransmit deadline, on the loop's timer wheel.
void Resolver::rearm() {
  timeval tv{};
  timeval* next = ares_timeout(channel_, nullptr, &tv);
  if (!next) {
    loop_.cancel(timer_);
    return;
  }
  int64_t ms = int64_t(next->tv_sec) * 1000 + next->tv_usec / 1000;
  loop_.arm(timer_, std::max<int64_t>(ms, 1));
}

// ---- Resolvers -------------------------------------------------------------------

Resolver& Resolvers::get(const ResolverConfig& cfg) {
  auto& slot = by_key_[cfg.key];
  if (!slot) slot = std::make_unique<Resolver>(loop_, cfg);
  return *slot;
}

}  // namespace torii::dns
