// libFuzzer target for the gRPC codec's response side: any bytes from an
// upstream, cut at any points, go through nghttp2's client session and the
// codec's head/body/trailer handling without a crash, a body emitted
// before its head, or anything after the stream's end.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/proxy_config.h"
#include "handlers/grpc/grpc_codec.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const torii::config::ProxyConfig cfg;
  torii::handlers::grpc::GrpcCodec codec(cfg);
  std::string out;
  codec.body_end(out);  // the request: preface, SETTINGS, HEADERS
  const size_t step = 1 + data[0] % 64;  // the first byte says how the rest is cut
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  bool head = false;
  bool ended = false;
  torii::http1::ParsedResponse resp;
  for (size_t pos = 0; pos < in.size() && !ended; pos += step) {
    std::string_view piece = in.substr(pos, step);
    size_t consumed = 0;
    if (!head) {
      const auto st = codec.parse_head(piece, resp, consumed);
      if (st == torii::http1::ParseStatus::error) return 0;
      check(consumed == piece.size());
      if (st == torii::http1::ParseStatus::done) {
        head = true;
        piece = {};
      } else {
        continue;
      }
    }
    const auto body = codec.feed_body(piece, consumed, [&](std::string_view) { check(head); });
    if (body == torii::handlers::UpstreamCodec::Body::error) return 0;
    ended = body == torii::handlers::UpstreamCodec::Body::done;
    out.clear();
    codec.take_output(out);
  }
  std::vector<std::pair<std::string, std::string>> trailers;
  codec.take_trailers(trailers);
  return 0;
}
