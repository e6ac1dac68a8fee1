// The process's one owner of `server NAME resolve` names: a thread with its
// own event loop and resolvers that asks for each name when its answer
// runs out (TTL or the resolver's valid=, plus a second, as nginx) and
// hands every change to the group's LiveGroup, the list the admin API
// edits too. Workers switch to the new list at their next pick (one atomic
// version load); requests in flight finish on the list they started with,
// and idle connections to an address that left are closed. One resolver
// for the process, however many workers, so a name server sees one query
// per name and TTL, not N.
//
// What an answer does is nginx's (ngx_http_upstream_zone_module): an
// address list replaces the name's servers; "Host not found" (the name or
// its records are gone) leaves the name with no server; any other failure
// (a timeout, a server failure) keeps the last addresses and asks again
// after resolver_timeout (at least a second).
#pragma once

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "config/config.h"

namespace torii::core {
class EventLoop;
}  // namespace torii::core

namespace torii::upstream {

class NameRefresher {
 public:
  NameRefresher();
  ~NameRefresher();  // stops the thread
  NameRefresher(const NameRefresher&) = delete;
  NameRefresher& operator=(const NameRefresher&) = delete;

  // From the main thread, at start and on every reload before the workers
  // get `cfg`: its names start with the addresses the previous config's
  // groups of the same name had (so a reload never leaves a group empty
  // while it asks again), then the thread watches the names of `cfg`. The
  // thread starts with the first config that has a name to resolve.
  void use_config(const std::shared_ptr<const config::Config>& cfg);
  void stop();

 private:
  struct Name;
  // On the thread: the names of `cfg` replace those watched so far.
  void watch(const std::shared_ptr<const config::Config>& cfg);

  std::mutex mu_;
  std::shared_ptr<const config::Config> current_;  // the last config handed over (main thread only)
  std::unique_ptr<core::EventLoop> loop_;          // null until a config has a name to resolve
  std::thread thread_;
  struct State;
  std::unique_ptr<State> state_;  // the thread's resolvers and names; touched on the thread only
};

}  // namespace torii::upstream
