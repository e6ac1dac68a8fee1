#include "handlers/cgi_stream_codec.h"

namespace torii::handlers {

http1::ParseStatus CgiStreamCodec::parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) {
  head_.append(in);
  consumed = in.size();
  return head_.parse(out);
}

http1::BodyFraming CgiStreamCodec::start_body(const http1::ParsedResponse& r, bool) {
  return r.content_length >= 0 ? http1::BodyFraming::length : http1::BodyFraming::close;
}

UpstreamCodec::Body CgiStreamCodec::feed_body(std::string_view in, size_t& consumed,
                                              const std::function<void(std::string_view)>& emit) {
  if (!head_.rest().empty()) {
    emit(head_.rest());
    head_.drop_rest();
  }
  if (!in.empty()) emit(in);
  consumed = in.size();
  return Body::more;
}

}  // namespace torii::handlers
