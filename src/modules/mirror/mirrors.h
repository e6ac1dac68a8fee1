// The mirror requests a worker runs: one exchange per `mirror` URI, a copy
// of the client's request (its head's bytes, connection facts and, with
// mirror_request_body, the body it read) run through the pipeline from the
// server rewrite phase at that URI, past the access phases, with a sink that
// drops the response. They belong to the worker, not to the client's
// exchange, so the client's response, log line and next request never wait
// for them (nginx keeps the client's request open until its mirrors end).
// A stopping worker ends those still running.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <unordered_map>

namespace torii::core {
class EventLoop;
}
namespace torii::http {
class BodyReplay;
class Exchange;
}

namespace torii::mirror {

class Mirrors {
 public:
  explicit Mirrors(core::EventLoop& loop);
  ~Mirrors();
  Mirrors(const Mirrors&) = delete;
  Mirrors& operator=(const Mirrors&) = delete;

  // Starts one mirror of `client`'s request at `uri`; `body`, when given,
  // is the client's body it gets. The client's exchange is not touched.
  void start(http::Exchange& client, std::string_view uri, const http::BodyReplay* body);
  // post_action: the same kind of run at `target` (a URI, or a named
  // location), once the client's response has ended, with the client's
  // $status and $body_bytes_sent (modules/post_action).
  void start_post_action(http::Exchange& client, std::string_view target);
  size_t running() const { return runs_.size(); }

 private:
  struct Run;
  Run* prepare(http::Exchange& client, std::string_view what);  // null: no descriptor to spare
  void launch(Run& r);
  void ended(Run* r);

  core::EventLoop& loop_;
  std::unordered_map<Run*, std::unique_ptr<Run>> runs_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace torii::mirror
