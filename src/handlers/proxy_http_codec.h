// HTTP/1.x to the upstream (proxy_pass): the request head from
// proxy_headers.cc, a streamed body of unknown length chunked (HTTP/1.1),
// the response head by the strict response parser, the body by its
// Content-Length, chunks or the end of the connection.
#pragma once

#include <string>

#include "config/proxy_config.h"
#include "handlers/upstream_codec.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers {

class HttpUpstreamCodec final : public UpstreamCodec {
 public:
  HttpUpstreamCodec(const http::Exchange& ex, const config::ProxyConfig& cfg);

  const char* scheme() const override { return "http"; }
  std::string_view log_uri() const override { return uri_; }
  bool streams_unknown_length() const override { return cfg_.http_version >= 11; }
  bool use_cache_changes(const cache::UpstreamRequestChanges& c) override {
    cache_ = &c;
    return true;
  }
  bool request_head(RequestBody body, int64_t length, std::string& out) override;
  void body_piece(std::string_view data, std::string& out) override;
  void body_end(std::string& out) override;

  void reset() override { parser_.reset(); }
  http1::ParseStatus parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) override {
    return parser_.parse(in, out, consumed);
  }
  const char* error() const override { return parser_.error(); }
  bool interim_responses() const override { return true; }
  http1::BodyFraming start_body(const http1::ParsedResponse& r, bool head_request) override;
  Body feed_body(std::string_view in, size_t& consumed, const std::function<void(std::string_view)>& emit) override;
  bool ends_at_eof() const override { return framing_ == http1::BodyFraming::close; }
  bool take_trailers(std::vector<std::pair<std::string, std::string>>& out) override;
  bool reusable(const http1::ParsedResponse& r) const override {
    return r.keep_alive() && framing_ != http1::BodyFraming::close;
  }

 private:
  const http::Exchange& ex_;
  const config::ProxyConfig& cfg_;
  std::string uri_;
  bool chunked_ = false;  // the request body goes chunked
  const cache::UpstreamRequestChanges* cache_ = nullptr;
  http1::ResponseParser parser_;
  http1::BodyFraming framing_ = http1::BodyFraming::none;
  int64_t length_ = -1;
  http1::BodyDecoder decoder_;
};

}  // namespace torii::handlers
