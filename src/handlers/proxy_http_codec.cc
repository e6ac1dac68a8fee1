#include "handlers/proxy_http_codec.h"

#include <cstdio>

#include "handlers/proxy_headers.h"
#include "http/exchange.h"

namespace torii::handlers {

HttpUpstreamCodec::HttpUpstreamCodec(const http::Exchange& ex, const config::ProxyConfig& cfg)
    : ex_(ex), cfg_(cfg), uri_(upstream_uri(ex, cfg)), parser_(cfg.buffer_size) {}

bool HttpUpstreamCodec::request_head(RequestBody body, int64_t length, std::string& out) {
  chunked_ = body == RequestBody::chunked;
  return build_request_head(ex_, cfg_, uri_, body, length, out, cache_).upgrade;
}

void HttpUpstreamCodec::body_piece(std::string_view data, std::string& out) {
  if (!chunked_) {
    out.append(data);
    return;
  }
  char size[24];
  const int n = snprintf(size, sizeof size, "%zx\r\n", data.size());
  out.append(size, size_t(n));
  out.append(data);
  out.append("\r\n");
}

void HttpUpstreamCodec::body_end(std::string& out) {
  if (chunked_) out.append("0\r\n\r\n");
}

http1::BodyFraming HttpUpstreamCodec::start_body(const http1::ParsedResponse& r, bool head_request) {
  framing_ = http1::response_framing(r, head_request);
  if (r.status == 101) framing_ = http1::BodyFraming::none;
  length_ = r.content_length;
  if (framing_ == http1::BodyFraming::length) decoder_.start_length(r.content_length);
  if (framing_ == http1::BodyFraming::chunked) {
    decoder_.start_chunked();
    if (cfg_.pass_trailers) decoder_.keep_trailers();
  }
  return framing_;
}

bool HttpUpstreamCodec::take_trailers(std::vector<std::pair<std::string, std::string>>& out) {
  if (!cfg_.pass_trailers || framing_ != http1::BodyFraming::chunked) return false;
  for (auto& [name, value] : decoder_.take_trailers())
    if (field_passes(cfg_, name)) out.emplace_back(std::move(name), std::move(value));
  return !out.empty();
}

UpstreamCodec::Body HttpUpstreamCodec::feed_body(std::string_view in, size_t& consumed,
                                                 const std::function<void(std::string_view)>& emit) {
  consumed = 0;
  // No body, or an empty one (RFC 9112 6.3: a Content-Length of 0 is a
  // complete body): the response ends with its head.
  if (framing_ == http1::BodyFraming::none || (framing_ == http1::BodyFraming::length && length_ == 0))
    return Body::done;
  if (framing_ == http1::BodyFraming::close) {
    if (!in.empty()) emit(in);
    consumed = in.size();
    return Body::more;
  }
  if (in.empty()) return Body::more;
  const auto st = decoder_.decode(in, consumed, [&emit](std::string_view d) { emit(d); });
  if (st == http1::BodyDecoder::Status::error) return Body::error;
  if (st == http1::BodyDecoder::Status::done) return Body::done;
  return Body::more;
}

}  // namespace torii::handlers
