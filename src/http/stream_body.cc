#include "http/stream_body.h"

#include <climits>

#include "http/pipeline.h"
#include "http/exchange.h"
#include "http/response.h"
#include "log/error_log.h"

namespace torii::http {

void StreamBody::on_data(std::string_view data, int64_t now_ms, Exchange* ex) {
  received_ += int64_t(data.size());
  activity_ms_ = now_ms;
  if (ex) ex->request_length += int64_t(data.size());
  if (dropping_) {
    if (!data.empty()) owner_.acknowledge_body(data.size());
    return;
  }
  body_.append(data);
}

bool StreamBody::start_reading(BodyReader* reader, int64_t now_ms) {
  if (!had_body_ || end_delivered_ || dropping_) {
    reader->on_body_end();
    return false;
  }
  reading_ = true;
  reader_ = reader;
  activity_ms_ = now_ms;
  return true;
}

bool StreamBody::resume(int64_t now_ms) {
  if (!paused_) return false;
  paused_ = false;
  activity_ms_ = now_ms;
  return true;
}

void StreamBody::drop() {
  dropping_ = true;
  reader_ = nullptr;
  if (!body_.empty()) owner_.acknowledge_body(body_.size());
  std::string().swap(body_);
}

void StreamBody::deliver(Exchange& ex, const char* remote_addr) {
  const auto& s = ex.settings();
  if (!dropping_ && !ex.finished() && s.client_max_body_size > 0 && received_ > s.client_max_body_size) {
    TORII_LOG(error, "client intended to send too large body: %lld bytes, client: %s",
              static_cast<long long>(received_), remote_addr);
    drop();
    if (!ex.head_sent()) {
      send_error(ex, 413);
    } else {
      owner_.cancel_stream();
    }
    return;
  }
  if (!reading_) {
    // Nobody asked for the body and nobody will: give the window back.
    if (ex.finished()) drop();
    return;
  }
  if (!reader_) return;
  while (!paused_ && !body_.empty()) {
    std::string chunk;
    chunk.swap(body_);
    const size_t n = chunk.size();
    const bool more = reader_->on_body_data(chunk);
    owner_.acknowledge_body(n);
    if (owner_.stream_closed() || !reader_) return;
    if (!more) paused_ = true;
  }
  if (remote_closed_ && body_.empty() && !end_delivered_ && !paused_) {
    end_delivered_ = true;
    BodyReader* r = reader_;
    reader_ = nullptr;
    r->on_body_end();
  }
}

int64_t StreamBody::deadline(const Exchange& ex) const {
  // A paused reader is our wait, not the client's.
  if (!reading_ || !reader_ || paused_ || remote_closed_) return INT64_MAX;
  return ex.body_timeout_at(activity_ms_);
}

size_t StreamBody::close() {
  const size_t unread = body_.size();
  std::string().swap(body_);
  reader_ = nullptr;
  return unread;
}

}  // namespace torii::http
