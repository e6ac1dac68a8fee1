#include "modules/auth_request/auth_request.h"

#include <memory>
#include <optional>
#include <string>

#include "core/event_loop.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/access/access_phase.h"
#include "modules/limit_rate/limit_rate.h"
#include "modules/rewrite/runner.h"

namespace torii::auth {

namespace {

// The subrequest's response goes nowhere: its head stays in the child
// exchange, its body is dropped, its end tells the parent.
class VerdictSink : public http::ResponseSink {
 public:
  explicit VerdictSink(std::function<void()> done) : done_(std::move(done)) {}
  void send_head(const http::ResponseHead&) override {}
  void send_body(std::string_view) override {}
  void send_file(std::shared_ptr<const http::OpenFile>, int64_t, int64_t) override {}
  void finish() override {
    if (done_) {
      auto d = std::move(done_);
      done_ = nullptr;
      d();
    }
  }

 private:
  std::function<void()> done_;
};

struct AuthRequestState : http::Exchange::HandlerState {
  AuthRequestState(http::Exchange& p, int prior_code)
      : parent(p), prior(prior_code), sink([this, alive = std::weak_ptr<char>(alive_)] {
          // Decided at the end of the turn: never inside the child's own calls.
          parent.services().loop->defer([this, alive] {
            if (!alive.expired()) done();
          });
        }) {}

  void on_client_gone() override {
    if (child) child->client_gone();
  }

  void done();

  http::Exchange& parent;
  int prior;
  std::shared_ptr<char> alive_ = std::make_shared<char>();
  VerdictSink sink;
  std::optional<http::Exchange> child;
  std::string args;  // the subrequest's arguments (its req.query points here)
};

void AuthRequestState::done() {
  http::Exchange& ex = parent;
  http::Exchange& sub = *child;
  const config::LimitsSettings& ls = ex.settings().limits;
  for (const auto& v : ls.auth_request_set) {
    std::string value = http::render(v.value, sub);
    if (v.args)
      rewrite::set_args(ex, std::move(value));
    else if (v.limit_rate)
      limits::set_limit_rate(ex, value);
    else
      rewrite::set_slot(ex, v.slot, value);
  }
  int status = sub.status;
  int verdict = 0;
  if (status == 401) {
    if (const std::string* challenge = sub.response.find("WWW-Authenticate"))
      ex.response.set("WWW-Authenticate", *challenge);
    verdict = 401;
  } else if (status == 403) {
    verdict = 403;
  } else if (status < 200 || status >= 300) {
    TORII_LOG_EX(ex, error, "auth request unexpected status: %d%s", status, http::log_context(ex).c_str());
    verdict = 500;
  }
  // The request goes on and may hand its state to a handler: this object
  // (and the child exchange) lives to the end of the turn.
  std::shared_ptr<http::Exchange::HandlerState> self = std::move(ex.handler_state);
  ex.services().loop->defer([self] {});
  access::finish_access(ex, verdict, prior);
}

}  // namespace

bool start_auth_request(http::Exchange& ex, int prior) {
  core::EventLoop* loop = ex.services().loop;
  if (!loop) {
    http::send_error(ex, 500);
    return false;
  }
  auto state = std::make_unique<AuthRequestState>(ex, prior);
  AuthRequestState& st = *state;
  if (ex.handler_state) {
    std::shared_ptr<http::Exchange::HandlerState> old = std::move(ex.handler_state);
    loop->defer([old] {});
  }
  ex.handler_state = std::move(state);

  st.child.emplace(st.sink, ex.conn(), ex.services());
  http::Exchange& sub = *st.child;
  sub.req = ex.req;
  sub.req.method = http::Method::get;
  sub.req.method_name = "GET";
  sub.req.content_length = -1;  // no body, as nginx's (a Content-Length field would still go up)
  sub.req.chunked = false;
  sub.req.expect_continue = false;
  const std::string& uri = ex.settings().limits.auth_request_uri;
  size_t q = uri.find('?');
  sub.req.path = uri.substr(0, q);
  if (q != std::string::npos) {
    st.args = uri.substr(q + 1);
    sub.req.query = st.args;
    sub.req.has_query = true;
  } else {
    sub.req.query = {};
    sub.req.has_query = false;
  }
  sub.config = ex.config;
  sub.server = ex.server;
  http::share_request_id(sub, ex);
  sub.is_internal = true;
  sub.start = ex.start;
  sub.start_unix_ms = ex.start_unix_ms;
  sub.access.subrequest = true;
  sub.access.limit_req_status = ex.access.limit_req_status;
  sub.access.limit_conn_status = ex.access.limit_conn_status;
  http::run_request(sub);
  if (!sub.head_sent() && !sub.handler_state) {
    // Answered with no response at all (return 444): not an answer.
    loop->defer([&st, alive = std::weak_ptr<char>(st.alive_)] {
      if (!alive.expired()) st.done();
    });
  }
  return true;
}

}  // namespace torii::auth
