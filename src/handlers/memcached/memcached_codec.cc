#include "handlers/memcached/memcached_codec.h"

#include "http/exchange.h"
#include "upstream/memcached/key.h"

namespace torii::handlers::memcached {

namespace reply = upstream::memcached;

MemcachedCodec::MemcachedCodec(const http::Exchange& ex, const config::CgiConfig& cfg, std::string_view key)
    : ex_(ex), cfg_(cfg) {
  reply::append_get(key, request_, key_);
}

bool MemcachedCodec::request_head(RequestBody, int64_t, std::string& out) {
  out.append(request_);
  return false;
}

void MemcachedCodec::reset() {
  line_ = {};
  value_ = reply::ValueReader();
  body_ = false;
  complete_ = false;
  error_.clear();
}

http1::ParseStatus MemcachedCodec::parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) {
  consumed = 0;
  // The line must fit in memcached_buffer_size, as in nginx's buffer.
  const size_t room = cfg_.upstream.buffer_size;
  switch (reply::parse_reply_line(in.substr(0, room), key_, cfg_.gzip_flag != 0, line_, error_)) {
    case reply::LineStatus::need_more:
      if (in.size() < room) return http1::ParseStatus::need_more;
      error_ = "upstream sent too big header";
      return http1::ParseStatus::error;
    case reply::LineStatus::error:
      return http1::ParseStatus::error;
    case reply::LineStatus::done:
      break;
  }
  consumed = line_.size;
  out = {};
  if (line_.kind == reply::ReplyLine::Kind::miss) {
    log_lines_.emplace_back(config::LogLevel::info, "key: \"" + key_ + "\" was not found by memcached");
    out.status = 404;
    out.content_length = 0;
    complete_ = consumed == in.size();
    return http1::ParseStatus::done;
  }
  out.status = 200;
  out.content_length = line_.length;
  // nginx types the item as a file of the request's URI would be.
  out.headers.push_back({"Content-Type", config::mime_type(ex_.settings(), ex_.req.path), http::HeaderToken::content_type});
  if (line_.flags & cfg_.gzip_flag) out.headers.push_back({"Content-Encoding", "gzip", http::HeaderToken::none});
  return http1::ParseStatus::done;
}

http1::BodyFraming MemcachedCodec::start_body(const http1::ParsedResponse& r, bool head_request) {
  if (r.status != 200) return http1::BodyFraming::none;
  // A HEAD leaves the value unread: its connection is closed, as nginx's.
  complete_ = false;
  body_ = !head_request;
  value_ = reply::ValueReader(line_.length);
  return body_ ? http1::BodyFraming::length : http1::BodyFraming::none;
}

UpstreamCodec::Body MemcachedCodec::feed_body(std::string_view in, size_t& consumed,
                                              const std::function<void(std::string_view)>& emit) {
  consumed = 0;
  if (!body_) return Body::done;
  consumed = in.size();
  std::string_view value;
  const auto st = value_.feed(in, value);
  if (!value.empty()) emit(value);
  switch (st) {
    case reply::ValueReader::Status::more:
      return Body::more;
    case reply::ValueReader::Status::done:
      complete_ = true;
      return Body::done;
    case reply::ValueReader::Status::bad_trailer:
      // As nginx: the value went out whole, the connection is not kept.
      log_lines_.emplace_back(config::LogLevel::error, "memcached sent invalid trailer");
      return Body::done;
  }
  return Body::error;
}

bool MemcachedCodec::take_log_line(config::LogLevel& level, std::string& text) {
  if (log_lines_.empty()) return false;
  level = log_lines_.front().first;
  text = std::move(log_lines_.front().second);
  log_lines_.erase(log_lines_.begin());
  return true;
}

}  // namespace torii::handlers::memcached
