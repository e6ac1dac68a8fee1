// A subrequest whose response goes into another response's body (nginx's
// ngx_http_subrequest as the SSI and addition filters use it): a child
// exchange for a URI, run through the client's server (rewrite, location
// selection, the location's handler: a file, a proxied upstream, a
// return) past the access phases, as nginx runs subrequests. Its response
// head is kept here and its body is collected for the parent to send in
// order; the parent is told of each change at the end of the loop turn.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "http/exchange.h"
#include "http/piece_queue.h"

namespace torii::ssi {

class Subrequest final : public http::ResponseSink {
 public:
  // `on_change` runs at the end of a loop turn in which the body grew or
  // the response ended; never inside the child's own calls.
  Subrequest(http::Exchange& parent, std::string path, std::string args, std::function<void()> on_change);

  // Runs the child's request. It may end before this returns.
  void start();

  bool done() const { return done_; }
  int status() const { return ex_.status; }
  int64_t body_size() const { return body_size_; }
  // What came of the body and was not taken yet.
  http::PieceQueue& body() { return body_; }
  // Drops what came of the body (a stub replaces it).
  void clear_body();
  // The body as text, at most `limit` bytes (the `set` parameter).
  bool body_text(size_t limit, std::string& out);
  // How much of the body may be kept in memory: the subrequest's own
  // location's subrequest_output_buffer_size, as nginx reads it.
  size_t output_limit() const {
    return ex_.server ? ex_.settings().core.subrequest_output_buffer_size
                      : config::CoreSettings().subrequest_output_buffer_size;
  }

  // The child's ResponseSink.
  void send_head(const http::ResponseHead& head) override {}
  void send_body(std::string_view data) override;
  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override;
  void finish() override;
  void abort() override;

 private:
  void changed();

  http::Exchange& parent_;
  std::string args_;  // the child's req.query points here
  std::function<void()> on_change_;
  http::PieceQueue body_;
  int64_t body_size_ = 0;
  bool done_ = false;
  bool notice_pending_ = false;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
  http::Exchange ex_;  // last: it refers to the members above
};

}  // namespace torii::ssi
