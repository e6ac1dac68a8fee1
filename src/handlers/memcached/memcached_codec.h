// memcached to the upstream (memcached_pass): "get KEY\r\n" with
// $memcached_key escaped as nginx does; a VALUE line becomes a 200 whose
// length is the item's, typed by the location's types like a file of the
// URI (Content-Encoding: gzip when the item's flags have a
// memcached_gzip_flag bit), and the value's bytes stream to the client with
// the "\r\nEND\r\n" after them checked; END (a miss) becomes a 404. The
// connection serves the next request once a reply was read to its end.
#pragma once

#include <string>
#include <vector>

#include "config/cgi_config.h"
#include "handlers/upstream_codec.h"
#include "upstream/memcached/reply.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers::memcached {

class MemcachedCodec final : public UpstreamCodec {
 public:
  // `key`: $memcached_key as rendered for this request (not empty).
  MemcachedCodec(const http::Exchange& ex, const config::CgiConfig& cfg, std::string_view key);

  const char* scheme() const override { return "memcached"; }
  bool streams_unknown_length() const override { return false; }
  bool request_head(RequestBody body, int64_t length, std::string& out) override;
  void body_piece(std::string_view, std::string&) override {}  // nginx sends no body
  void body_end(std::string&) override {}

  void reset() override;
  http1::ParseStatus parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) override;
  const char* error() const override { return error_.c_str(); }
  http1::BodyFraming start_body(const http1::ParsedResponse& r, bool head_request) override;
  Body feed_body(std::string_view in, size_t& consumed, const std::function<void(std::string_view)>& emit) override;
  bool ends_at_eof() const override { return false; }
  bool reusable(const http1::ParsedResponse&) const override { return complete_; }
  bool take_log_line(config::LogLevel& level, std::string& text) override;

 private:
  const http::Exchange& ex_;
  const config::CgiConfig& cfg_;
  std::string request_;  // "get KEY\r\n"
  std::string key_;      // the key as sent, escaped
  upstream::memcached::ReplyLine line_;
  upstream::memcached::ValueReader value_;
  bool body_ = false;      // the value's bytes are passed on (not a miss, not HEAD)
  bool complete_ = false;  // the reply was read to its end, nothing after it
  std::string error_;
  std::vector<std::pair<config::LogLevel, std::string>> log_lines_;
};

}  // namespace torii::handlers::memcached
