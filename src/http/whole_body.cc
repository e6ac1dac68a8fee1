#include "http/whole_body.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "core/event_loop.h"
#include "http/body_replay.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "log/error_log.h"

namespace torii::http {

namespace {

// The request waits in this handler state while its body is read.
struct WholeBodyRead final : Exchange::HandlerState, BodyReader {
  WholeBodyRead(Exchange& e, std::function<void(Exchange&)> next)
      : ex(e),
        then(std::move(next)),
        body(std::make_shared<handlers::RequestBodyBuffer>(e.settings().client_body_buffer_size,
                                                           e.settings().client_body_temp_path,
                                                           e.settings().client_body_temp_levels)),
        limit(e.settings().client_max_body_size) {}

  bool on_body_data(std::string_view data) override {
    if (failed) return true;  // answered: the rest is read and dropped
    received += int64_t(data.size());
    if (limit > 0 && received > limit) {
      TORII_LOG_EX(ex, error, "client intended to send too large chunked body: %lld+ bytes%s",
                static_cast<long long>(received), log_context(ex).c_str());
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
      send_error(ex, status);
    });
  }

  void proceed() {
    if (ex.req.content_length < 0) ex.body_length_read = body->size();
    ex.request_body = body;
    ex.body_source = std::make_unique<BodyReplay>(*ex.services().loop, std::move(body));
    // This state lives to the end of the turn; what `then` starts may put
    // its own in its place.
    std::shared_ptr<Exchange::HandlerState> self = std::move(ex.handler_state);
    ex.services().loop->defer([self] {});
    then(ex);
  }

  Exchange& ex;
  std::function<void(Exchange&)> then;
  std::shared_ptr<handlers::RequestBodyBuffer> body;
  int64_t limit;
  int64_t received = 0;
  bool failed = false;
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

}  // namespace

void read_whole_body(Exchange& ex, std::function<void(Exchange&)> then) {
  auto state = std::make_unique<WholeBodyRead>(ex, std::move(then));
  WholeBodyRead& read = *state;
  if (ex.handler_state) {  // an earlier phase's, maybe still on the stack
    std::shared_ptr<Exchange::HandlerState> old = std::move(ex.handler_state);
    ex.services().loop->defer([old] {});
  }
  ex.handler_state = std::move(state);
  ex.read_body(&read);
}

}  // namespace torii::http
