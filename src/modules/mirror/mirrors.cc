#include "modules/mirror/mirrors.h"

#include <string>

#include "config/config.h"
#include "core/event_loop.h"
#include "core/fd_budget.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/sub_exchange.h"
#include "log/error_log.h"
#include "http/body_replay.h"

namespace torii::mirror {

// One mirror: its own copy of the client's head and connection facts, an
// exchange over them and the sink its response goes to (nowhere; its end
// tells the owner). The body, when it has one, is the client's stored body
// read again from the start.
struct Mirrors::Run final : http::ResponseSink {
  Run(Mirrors& o, http::Exchange& client) : owner(o), conn(client.conn()), ex(*this, conn, client.services()) {
    http::copy_head(client.req, ex.req, bytes);
  }
  ~Run() override { core::FdBudget::process().add(-1); }

  void send_head(const http::ResponseHead&) override {}
  void send_body(std::string_view) override {}
  void send_file(std::shared_ptr<const http::OpenFile>, int64_t, int64_t) override {}
  void finish() override {
    if (done) return;
    done = true;
    // Ended at the end of the turn: never inside the handler's own call.
    owner.loop_.defer([owner = &owner, alive = std::weak_ptr<char>(owner.alive_), self = this] {
      if (!alive.expired()) owner->ended(self);
    });
  }
  void abort() override { finish(); }
  void read_body(http::BodyReader* reader) override {
    if (body) return body->read_body(reader);
    reader->on_body_end();
  }
  void resume_body() override {
    if (body) body->resume_body();
  }

  Mirrors& owner;
  std::string bytes;
  http::ConnectionInfo conn;
  std::unique_ptr<http::BodyReplay> body;
  http::Exchange ex;  // last: it refers to the members above
  bool done = false;
};

Mirrors::Mirrors(core::EventLoop& loop) : loop_(loop) {}
Mirrors::~Mirrors() = default;

Mirrors::Run* Mirrors::prepare(http::Exchange& client, std::string_view what) {
  // A mirror holds an upstream socket that no client connection accounts
  // for: it is one more descriptor, and none is taken from the reserve.
  core::FdBudget& fds = core::FdBudget::process();
  if (fds.limit() > 0 && fds.in_use() + 1 + fds.reserve() > fds.limit()) {
    TORII_LOG_EX(client, warn, "%.*s not started: no descriptor to spare%s", int(what.size()), what.data(),
              http::log_context(client).c_str());
    return nullptr;
  }
  fds.add(1);
  auto run = std::make_unique<Run>(*this, client);
  Run& r = *run;
  runs_.emplace(&r, std::move(run));
  http::Exchange& ex = r.ex;
  ex.req.expect_continue = false;
  ex.req.content_length = -1;
  ex.req.chunked = false;
  ex.config = client.config;
  ex.server = client.server;
  ex.variables = client.variables;
  ex.is_internal = true;
  ex.header_only = true;  // as nginx's: the response is not wanted
  ex.ignore_client_abort = true;
  ex.realip_done = true;  // the client's address is already the one realip found
  ex.start = client.start;
  ex.start_unix_ms = client.start_unix_ms;
  ex.access.subrequest = true;  // past the access phases, as the client's request
  ex.access.limit_req_status = client.access.limit_req_status;
  ex.access.limit_conn_status = client.access.limit_conn_status;
  return &r;
}

void Mirrors::launch(Run& r) {
  http::resume_request(r.ex, http::Phase::start);
  // Answered at once with nothing to send (return 444), or already done.
  if (!r.ex.handler_state) r.finish();
}

void Mirrors::start(http::Exchange& client, std::string_view uri, const http::BodyReplay* body) {
  Run* r = prepare(client, "mirror \"" + std::string(uri) + "\"");
  if (!r) return;
  http::Exchange& ex = r->ex;
  // As nginx's subrequest: the mirror's URI with the client's arguments,
  // method and fields; $request_uri stays the client's.
  ex.req.path.assign(uri);
  if (body) {
    r->body = std::make_unique<http::BodyReplay>(loop_, body->body());
    ex.req.content_length = r->body->body()->size();
  }
  launch(*r);
}

void Mirrors::start_post_action(http::Exchange& client, std::string_view target) {
  Run* r = prepare(client, "post_action \"" + std::string(target) + "\"");
  if (!r) return;
  http::Exchange& ex = r->ex;
  // nginx's post action is the client's own request sent on: what it
  // answered and sent stays readable ($status, $body_bytes_sent...).
  ex.status = client.status;
  ex.body_bytes_sent = client.body_bytes_sent;
  ex.header_bytes = client.header_bytes;
  ex.request_length = client.request_length;
  ex.req.content_length = -1;  // the body went to the client's handler
  if (!target.empty() && target[0] == '/') {
    // nginx's internal redirect without arguments: the target's URI, no $args.
    ex.req.path.assign(target);
    ex.req.query = {};
    ex.req.has_query = false;
  } else {
    const config::Location* named = config::find_named_location(*ex.server, target);
    if (!named) {
      TORII_LOG_EX(client, error, "could not find named location \"%.*s\"%s", int(target.size()), target.data(),
                http::log_context(client).c_str());
      r->finish();
      return;
    }
    ex.location = named;
  }
  launch(*r);
}

void Mirrors::ended(Run* r) { runs_.erase(r); }

}  // namespace torii::mirror
