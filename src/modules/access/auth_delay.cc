#include "modules/access/auth_delay.h"

#include <memory>

#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "log/error_log.h"

namespace torii::access {

namespace {

// The request waits in its handler state: a client that goes away ends
// the exchange, and the timer with it.
struct AuthDelay final : http::Exchange::HandlerState {
  AuthDelay(http::Exchange& e, int s) : ex(e), status(s) {}
  static void fire(void* self) {
    auto* d = static_cast<AuthDelay*>(self);
    http::Exchange& ex = d->ex;
    // The answer may start another handler (error_page): this state lives
    // to the end of the turn, not inside its own call.
    std::shared_ptr<http::Exchange::HandlerState> me = std::move(ex.handler_state);
    ex.services().loop->defer([me] {});
    http::send_error(ex, d->status);
  }
  http::Exchange& ex;
  int status;
  core::Timer timer{&AuthDelay::fire, this};
};

}  // namespace

void send_refusal(http::Exchange& ex, int status) {
  const int64_t delay = ex.settings().core.auth_delay.count();
  core::EventLoop* loop = ex.services().loop;
  if (status != 401 || delay <= 0 || !loop) {
    http::send_error(ex, status);
    return;
  }
  TORII_LOG_EX(ex, info, "delaying unauthorized request%s", http::log_context(ex).c_str());
  if (ex.handler_state) {  // an auth check's own state, maybe still on the stack
    std::shared_ptr<http::Exchange::HandlerState> old = std::move(ex.handler_state);
    loop->defer([old] {});
  }
  auto state = std::make_unique<AuthDelay>(ex, status);
  loop->arm(state->timer, delay);
  ex.handler_state = std::move(state);
}

}  // namespace torii::access
