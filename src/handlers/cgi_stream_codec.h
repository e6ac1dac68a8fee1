// What uwsgi and SCGI share: after the protocol's request head, the body
// goes unframed; back comes an HTTP/1.x status line or a CGI head, then the
// body up to the end of the connection (never reused, as nginx). Each
// protocol adds only its scheme and its request head.
#pragma once

#include <string>

#include "config/cgi_config.h"
#include "handlers/declared_length.h"
#include "handlers/upstream_codec.h"
#include "upstream/cgi_head.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers {

class CgiStreamCodec : public UpstreamCodec {
 public:
  CgiStreamCodec(const http::Exchange& ex, const config::CgiConfig& cfg)
      : ex_(ex), cfg_(cfg), head_(cfg.upstream.buffer_size, true) {}

  bool streams_unknown_length() const override { return false; }
  void body_piece(std::string_view data, std::string& out) override { out.append(data); }
  void body_end(std::string&) override {}

  void reset() override { head_.reset(); }
  http1::ParseStatus parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) override;
  const char* error() const override { return head_.error(); }
  http1::BodyFraming start_body(const http1::ParsedResponse& r, bool head_request) override;
  Body feed_body(std::string_view in, size_t& consumed, const std::function<void(std::string_view)>& emit) override;
  // The end of the stream ends the body, unless it came short of the
  // declared length.
  bool ends_at_eof() const override { return !length_.short_of_it(); }
  bool take_log_line(config::LogLevel& level, std::string& line) override {
    return length_.take_excess_warning(level, line);
  }
  bool reusable(const http1::ParsedResponse&) const override { return false; }

 protected:
  const http::Exchange& ex_;
  const config::CgiConfig& cfg_;

 private:
  upstream::CgiHeadParser head_;
  DeclaredLength length_;
};

}  // namespace torii::handlers
