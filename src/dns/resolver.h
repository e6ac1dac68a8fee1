// Asynchronous name resolution for a worker (proxy_pass with variables,
// and whatever else must turn a name into addresses at request time).
// c-ares does the DNS protocol; its sockets are registered with the
// worker's event loop and its retransmit timeouts run on the loop's timer
// wheel, so no lookup ever blocks a worker. Answers are cached per worker
// for their TTL (or `valid=`); several requests for one name share one
// query. Results are reported as nginx's resolver reports them: state 0,
// or a DNS rcode (3: Host not found...) or 110 (Operation timed out).
#pragma once

#include <sys/socket.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/event_loop.h"
#include "dns/resolver_config.h"

struct ares_addrinfo;
struct ares_channeldata;

namespace torii::dns {

struct Address {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

struct Answer {
  int state = 0;  // 0: resolved; else see state_text()
  std::vector<Address> addrs;
  int64_t expires_ms = 0;  // when the TTL (or valid=) runs out, on the loop's clock; 0: no answer came
};

// nginx's words for a state: "Host not found", "Operation timed out"...
const char* state_text(int state);
constexpr int kTimedOut = 110;  // ETIMEDOUT, as nginx reports a resolver timeout

// A request waiting for an answer. Dropping it cancels the wait (the query
// itself goes on and fills the cache).
class Lookup {
 public:
  using Callback = std::function<void(const Answer&)>;
  Lookup(core::EventLoop& loop, Callback cb);
  ~Lookup();
  Lookup(const Lookup&) = delete;
  Lookup& operator=(const Lookup&) = delete;

 private:
  friend class Resolver;
  static void on_timeout(void* self);
  void deliver(const Answer& a);

  core::EventLoop& loop_;
  Callback cb_;
  core::Timer timer_;
};

class Resolver {
 public:
  Resolver(core::EventLoop& loop, const ResolverConfig& cfg);
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  // A cached, unexpired answer for `name`, or null.
  const Answer* cached(const std::string& name);
  // Starts (or joins) a query for `name`. The callback runs later from the
  // event loop, never inside this call; at the latest after `timeout_ms`
  // with kTimedOut. Keep the returned handle while waiting.
  std::shared_ptr<Lookup> resolve(const std::string& name, int64_t timeout_ms, Lookup::Callback cb);

  size_t cache_size() const { return cache_.size(); }

 private:
  struct Query;
  class Socket;
  struct Entry {
    Answer answer;
    int64_t expires_ms = 0;
  };

  static void on_sock_state(void* data, int fd, int readable, int writable);
  static void on_answer(void* arg, int status, int timeouts, ::ares_addrinfo* result);
  static void on_timer(void* self);
  void finish(const std::string& name, Answer answer, int64_t ttl_ms);
  void rearm();
  void process(int read_fd, int write_fd);

  core::EventLoop& loop_;
  ResolverConfig cfg_;
  ::ares_channeldata* channel_ = nullptr;
  bool ok_ = false;
  core::Timer timer_;
  std::unordered_map<int, std::unique_ptr<Socket>> sockets_;
  std::unordered_map<std::string, Entry> cache_;
  std::unordered_map<std::string, std::vector<std::weak_ptr<Lookup>>> waiting_;
};

// A worker's resolvers, one per distinct `resolver` setting, kept across
// reloads so their caches survive.
class Resolvers {
 public:
  explicit Resolvers(core::EventLoop& loop) : loop_(loop) {}
  Resolver& get(const ResolverConfig& cfg);

 private:
  core::EventLoop& loop_;
  std::unordered_map<std::string, std::unique_ptr<Resolver>> by_key_;
};

}  // namespace torii::dns
