// uwsgi to the application (uwsgi_pass): one packet of vars (the params
// and HTTP_* headers) with uwsgi_modifier1/2, the body unframed after it;
// back, an HTTP/1.x status line or a CGI head, then the body up to the
// end of the connection (never reused, as nginx).
#pragma once

#include <string>

#include "config/cgi_config.h"
#include "handlers/upstream_codec.h"
#include "upstream/cgi_head.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers::uwsgi {

class UwsgiCodec final : public UpstreamCodec {
 public:
  UwsgiCodec(const http::Exchange& ex, const config::CgiConfig& cfg)
      : ex_(ex), cfg_(cfg), head_(cfg.upstream.buffer_size, true) {}

  const char* scheme() const override { return "uwsgi"; }
  bool streams_unknown_length() const override { return false; }
  bool request_head(RequestBody body, int64_t length, std::string& out) override;
  void body_piece(std::string_view data, std::string& out) override { out.append(data); }
  void body_end(std::string&) override {}

  void reset() override { head_.reset(); }
  http1::ParseStatus parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) override;
  const char* error() const override { return head_.error(); }
  http1::BodyFraming start_body(const http1::ParsedResponse& r, bool head_request) override;
  Body feed_body(std::string_view in, size_t& consumed, const std::function<void(std::string_view)>& emit) override;
  bool ends_at_eof() const override { return true; }
  bool reusable(const http1::ParsedResponse&) const override { return false; }

 private:
  const http::Exchange& ex_;
  const config::CgiConfig& cfg_;
  upstream::CgiHeadParser head_;
};

}  // namespace torii::handlers::uwsgi
