#include "modules/mirror/mirror.h"

#include <cerrno>
#include <cstring>
#include <memory>

#include "config/mirror_config.h"
#include "core/event_loop.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "log/error_log.h"
#include "modules/mirror/mirrors.h"
#include "modules/mirror/stored_body.h"

namespace torii::mirror {

namespace {

void start_mirrors(http::Exchange& ex, const config::MirrorConfig& m) {
  mirror::Mirrors* mirrors = ex.services().mirrors;
  if (!mirrors) return;
  const BodyReplay* body = m.request_body ? dynamic_cast<const BodyReplay*>(ex.body_source.get()) : nullptr;
  for (const auto& uri : m.uris) mirrors->start(ex, uri, body);
}

// The request waits here while its body is read into a StoredBody
// (client_body_buffer_size in memory, the rest in a temporary file).
struct BodyRead final : http::Exchange::HandlerState, http::BodyReader {
  BodyRead(http::Exchange& e, const config::MirrorConfig& m)
      : ex(e), mirror(m), body(std::make_shared<StoredBody>(e.settings().client_body_buffer_size,
                                                             e.settings().client_body_temp_path,
                                                             e.settings().client_body_temp_levels)) {}

  bool on_body_data(std::string_view data) override {
    if (failed) return true;  // answered: the rest is read and dropped
    received += int64_t(data.size());
    const int64_t limit = ex.settings().client_max_body_size;
    if (limit > 0 && received > limit) {
      TORII_LOG(error, "client intended to send too large chunked body: %lld+ bytes%s",
                static_cast<long long>(received), http::log_context(ex).c_str());
      ex.close_connection = true;
      fail(413);
      return false;
    }
    if (!body->append(data)) {
      TORII_LOG(crit, "%s in \"%s\" failed (%d: %s), client: %s", body->what(), body->temp_dir().c_str(), errno,
                strerror(errno), ex.conn().remote_addr.c_str());
      fail(500);
    }
    return true;
  }

  void on_body_end() override {
    if (failed) return;
    // Goes on at the end of the turn: never inside the codec's call, and
    // this state is replaced by the content handler's.
    ex.services().loop->defer([this, alive = std::weak_ptr<char>(alive_)] {
      if (!alive.expired()) proceed();
    });
  }

  void fail(int status) {
    failed = true;
    ex.services().loop->defer([this, status, alive = std::weak_ptr<char>(alive_)] {
      if (alive.expired() || ex.head_sent()) return;
      http::send_error(ex, status);
    });
  }

  void proceed() {
    if (ex.req.content_length < 0) ex.body_length_read = body->size();
    ex.body_source = std::make_unique<BodyReplay>(*ex.services().loop, std::move(body));
    // This state lives to the end of the turn; the content handler may
    // put its own in its place.
    std::shared_ptr<http::Exchange::HandlerState> self = std::move(ex.handler_state);
    ex.services().loop->defer([self] {});
    start_mirrors(ex, mirror);
    http::resume_request(ex, http::Phase::mirrored);
  }

  http::Exchange& ex;
  const config::MirrorConfig& mirror;  // the location's, kept alive by ex.config
  std::shared_ptr<StoredBody> body;
  int64_t received = 0;
  bool failed = false;
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

}  // namespace

Gate run(http::Exchange& ex) {
  const config::MirrorConfig* m = ex.settings().mirror.get();
  // Mirrors are the client's request's own (nginx's r->main): not an auth
  // subrequest's, a slice part's or a mirror's.
  if (!m || m->uris.empty() || ex.access.subrequest || ex.background || !ex.services().loop) return Gate::proceed;
  if (m->request_body && ex.has_body() && !ex.body_source) {
    auto state = std::make_unique<BodyRead>(ex, *m);
    BodyRead& read = *state;
    if (ex.handler_state) {  // an earlier phase's, maybe still on the stack
      std::shared_ptr<http::Exchange::HandlerState> old = std::move(ex.handler_state);
      ex.services().loop->defer([old] {});
    }
    ex.handler_state = std::move(state);
    ex.read_body(&read);
    return Gate::wait;
  }
  start_mirrors(ex, *m);
  return Gate::proceed;
}

}  // namespace torii::mirror
