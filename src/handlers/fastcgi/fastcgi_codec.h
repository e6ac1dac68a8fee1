// FastCGI to the application (fastcgi_pass): BEGIN_REQUEST (keep_conn from
// fastcgi_keep_conn), the params as a PARAMS stream, the body as STDIN
// records; back, STDOUT carries the CGI head and the body, STDERR lines go
// to the error log ("FastCGI sent in stderr"), END_REQUEST ends the
// response. fastcgi_catch_stderr: a STDERR record holding one of its
// strings before the head is complete fails the try as an invalid header.
#pragma once

#include <deque>
#include <string>

#include "config/cgi_config.h"
#include "handlers/declared_length.h"
#include "handlers/upstream_codec.h"
#include "upstream/cgi_head.h"
#include "upstream/fastcgi/record.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers::fastcgi {

class FastcgiCodec final : public UpstreamCodec, private upstream::fastcgi::DecoderEvents {
 public:
  FastcgiCodec(const http::Exchange& ex, const config::CgiConfig& cfg)
      : ex_(ex), cfg_(cfg), head_(cfg.upstream.buffer_size, false) {}

  const char* scheme() const override { return "fastcgi"; }
  const char* name() const override { return "FastCGI"; }
  bool streams_unknown_length() const override { return false; }
  bool request_head(RequestBody body, int64_t length, std::string& out) override;
  void body_piece(std::string_view data, std::string& out) override;
  void body_end(std::string& out) override;
  size_t body_record_max() const override { return upstream::fastcgi::kMaxContent; }
  void body_record_header(size_t n, std::string& out) override;

  void reset() override;
  http1::ParseStatus parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) override;
  const char* error() const override { return error_; }
  http1::BodyFraming start_body(const http1::ParsedResponse& r, bool head_request) override;
  Body feed_body(std::string_view in, size_t& consumed, const std::function<void(std::string_view)>& emit) override;
  bool ends_at_eof() const override { return false; }
  bool reusable(const http1::ParsedResponse&) const override { return cfg_.keep_conn && decoder_.ended(); }
  bool take_stderr(std::string& out) override;
  bool take_log_line(config::LogLevel& level, std::string& line) override {
    return length_.take_excess_warning(level, line);
  }

 private:
  void on_stdout(std::string_view data) override;
  Body ended();
  void on_stderr(std::string_view data, bool record_end) override;

  const http::Exchange& ex_;
  const config::CgiConfig& cfg_;
  upstream::fastcgi::Decoder decoder_;
  upstream::CgiHeadParser head_;
  bool head_done_ = false;
  bool caught_ = false;  // fastcgi_catch_stderr matched
  DeclaredLength length_;
  const std::function<void(std::string_view)>* emit_ = nullptr;
  std::string stderr_record_;
  std::deque<std::string> stderr_lines_;
  const char* error_ = "";
};

}  // namespace torii::handlers::fastcgi
