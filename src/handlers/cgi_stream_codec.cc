#include "handlers/cgi_stream_codec.h"

namespace torii::handlers {

http1::ParseStatus CgiStreamCodec::parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) {
  head_.append(in);
  consumed = in.size();
  return head_.parse(out);
}

http1::BodyFraming CgiStreamCodec::start_body(const http1::ParsedResponse& r, bool head_request) {
  length_.reset(length_to_hold(r.content_length, r.status, head_request));
  return r.content_length >= 0 ? http1::BodyFraming::length : http1::BodyFraming::close;
}

UpstreamCodec::Body CgiStreamCodec::feed_body(std::string_view in, size_t& consumed,
                                              const std::function<void(std::string_view)>& emit) {
  if (!head_.rest().empty()) {
    length_.pass(head_.rest(), emit);
    head_.drop_rest();
  }
  length_.pass(in, emit);
  consumed = in.size();
  return length_.all_in() ? Body::done : Body::more;
}

}  // namespace torii::handlers
