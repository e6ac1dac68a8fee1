#include "cache/background.h"

#include <string>

#include "core/event_loop.h"
#include "http/exchange.h"
#include "http/pipeline.h"
#include "http/sub_exchange.h"

namespace torii::cache {

// The background request: its own copy of the client's request head and
// connection facts, an exchange over them, and the sink its response goes
// to (nowhere; its end tells the owner).
struct BackgroundUpdates::Update final : http::ResponseSink {
  Update(BackgroundUpdates& o, http::Exchange& client) : owner(o), conn(client.conn()), ex(*this, conn, client.services()) {
    http::copy_head(client.req, ex.req, bytes);
  }

  void send_head(const http::ResponseHead&) override {}
  void send_body(std::string_view) override {}
  void send_file(std::shared_ptr<const http::OpenFile>, int64_t, int64_t) override {}
  void finish() override {
    if (done) return;
    done = true;
    // Ended at the end of the turn: never inside the session's own call.
    owner.loop_.defer([owner = &owner, alive = std::weak_ptr<char>(owner.alive_), self = this] {
      if (!alive.expired()) owner->ended(self);
    });
  }

  BackgroundUpdates& owner;
  std::string bytes;
  http::ConnectionInfo conn;
  http::Exchange ex;  // last: it refers to the members above
  bool done = false;
};

BackgroundUpdates::BackgroundUpdates(core::EventLoop& loop) : loop_(loop) {}
BackgroundUpdates::~BackgroundUpdates() = default;

void BackgroundUpdates::start(http::Exchange& client) {
  auto update = std::make_unique<Update>(*this, client);
  Update& u = *update;
  updates_.emplace(&u, std::move(update));
  http::Exchange& ex = u.ex;
  http::take_route_of(ex, client);
  ex.background = true;
  ex.header_only = true;  // as nginx's: no body to encode or pace for nobody
  ex.ignore_client_abort = true;
  http::resume_request(ex, http::Phase::content);
  // Answered at once with nothing to send (no session started): done.
  if (!ex.handler_state) u.finish();
}

void BackgroundUpdates::ended(Update* u) { updates_.erase(u); }

}  // namespace torii::cache
