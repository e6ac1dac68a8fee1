// proxy_cache_background_update: the stale entry answers the client at
// once, and a request no client waits for refreshes it (nginx's background
// subrequest). That request is a copy of the client's (its head's bytes
// kept here, since the client's exchange may end first) run from the
// content phase of the same location with a sink that drops the response:
// the cache's Fill stores what the upstream sends, as for any miss.
//
// Each worker thread owns its updates, so a worker that stops ends them
// (the Fill then removes its temporary file and lets go of the lock).
#pragma once

#include <cstddef>
#include <memory>
#include <unordered_map>

namespace torii::core {
class EventLoop;
}
namespace torii::http {
class Exchange;
}

namespace torii::cache {

class BackgroundUpdates {
 public:
  explicit BackgroundUpdates(core::EventLoop& loop);
  ~BackgroundUpdates();
  BackgroundUpdates(const BackgroundUpdates&) = delete;
  BackgroundUpdates& operator=(const BackgroundUpdates&) = delete;

  // Starts refreshing what `client`'s request found stale, through the
  // location `client` is in. The client's exchange is not touched.
  void start(http::Exchange& client);
  size_t running() const { return updates_.size(); }

 private:
  struct Update;
  void ended(Update* u);

  core::EventLoop& loop_;
  std::unordered_map<Update*, std::unique_ptr<Update>> updates_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace torii::cache
