#include "modules/ssi/subrequest.h"

#include <algorithm>

#include "http/variables.h"
#include "core/event_loop.h"
#include "http/pipeline.h"

namespace torii::ssi {

namespace {

// nginx's subrequests skip the not-modified and range filters: an include
// is always the whole response, whatever the client's conditionals asked.
bool conditional_or_range(const http::Header& h) {
  using T = http::HeaderToken;
  if (h.token == T::if_modified_since || h.token == T::if_none_match || h.token == T::if_range || h.token == T::range)
    return true;
  auto is = [&](std::string_view name) {
    if (h.name.size() != name.size()) return false;
    for (size_t i = 0; i < name.size(); ++i)
      if ((h.name[i] | 0x20) != name[i]) return false;
    return true;
  };
  return is("if-unmodified-since") || is("if-match");
}

}  // namespace

Subrequest::Subrequest(http::Exchange& parent, std::string path, std::string args, std::function<void()> on_change)
    : parent_(parent), args_(std::move(args)), on_change_(std::move(on_change)),
      ex_(*this, parent.conn(), parent.services()) {
  ex_.req = parent.req;  // views into the client's buffer, which outlives every subrequest
  ex_.req.method = http::Method::get;
  ex_.req.method_name = "GET";
  ex_.req.content_length = -1;
  ex_.req.chunked = false;
  ex_.req.expect_continue = false;
  std::erase_if(ex_.req.headers, conditional_or_range);
  ex_.req.path = std::move(path);
  ex_.req.query = args_;
  ex_.req.has_query = !args_.empty();
  ex_.config = parent.config;
  ex_.server = parent.server;
  ex_.variables = parent.variables;
  http::share_request_id(ex_, parent);
  ex_.is_internal = true;  // a subrequest may reach `internal` locations
  ex_.access.subrequest = true;
  ex_.start = parent.start;
  ex_.start_unix_ms = parent.start_unix_ms;
  ex_.subrequest_depth = parent.subrequest_depth + 1;
  ex_.ssi_state = parent.ssi_state;
}

void Subrequest::start() {
  http::run_request(ex_);
  // Answered with nothing at all (return 444): an empty include.
  if (!ex_.head_sent() && !ex_.handler_state) finish();
}

void Subrequest::clear_body() { body_.clear(); }

bool Subrequest::body_text(size_t limit, std::string& out) {
  out.clear();
  while (!body_.empty()) {
    std::string_view slice;
    if (!body_.front_slice(limit - std::min(limit, out.size()) + 1, slice)) return false;
    const size_t n = slice.size();
    out.append(slice);
    body_.consume(n);
    if (out.size() > limit) return false;
  }
  return true;
}

void Subrequest::send_body(std::string_view data) {
  if (done_ || data.empty()) return;
  body_.push_bytes(data);
  body_size_ += int64_t(data.size());
  changed();
}

void Subrequest::send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) {
  if (done_ || length <= 0) return;
  body_.push_file(std::move(file), offset, length);
  body_size_ += length;
  changed();
}

void Subrequest::finish() {
  if (done_) return;
  done_ = true;
  changed();
}

void Subrequest::abort() { finish(); }

void Subrequest::changed() {
  if (notice_pending_) return;
  notice_pending_ = true;
  parent_.services().loop->defer([this, alive = std::weak_ptr<char>(alive_)] {
    if (alive.expired()) return;
    notice_pending_ = false;
    on_change_();
  });
}

}  // namespace torii::ssi
