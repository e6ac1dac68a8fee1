// libFuzzer target for the gRPC codec's response side: any bytes from an
// upstream, cut at any points, go through nghttp2's client session and the
// codec's head/body/trailer handling without a crash, a body emitted
// before its head, or anything after the stream's end. A call that ends
// in a reusable state hands its connection on as the keep-alive pool
// would: the bytes after it are what the upstream sends while the
// connection is idle (answered or refused), then a second call's response
// on the same session.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
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

using torii::handlers::grpc::GrpcCodec;

// One call on `codec` with the bytes of `in`, cut every `step` bytes.
// Returns how many bytes of `in` it used (all, unless the call ended) and
// whether the call ended with a reusable connection.
size_t run_call(GrpcCodec& codec, std::string_view in, size_t step, bool& reusable) {
  std::string out;
  codec.body_end(out);  // the request: (preface, SETTINGS,) HEADERS
  bool head = false;
  bool ended = false;
  reusable = false;
  torii::http1::ParsedResponse resp;
  size_t pos = 0;
  for (; pos < in.size() && !ended; pos += step) {
    std::string_view piece = in.substr(pos, step);
    size_t consumed = 0;
    if (!head) {
      const auto st = codec.parse_head(piece, resp, consumed);
      if (st == torii::http1::ParseStatus::error) return in.size();
      check(consumed == piece.size());
      if (st == torii::http1::ParseStatus::done) {
        head = true;
        piece = {};
      } else {
        continue;
      }
    }
    const auto body = codec.feed_body(piece, consumed, [&](std::string_view) { check(head); });
    if (body == torii::handlers::UpstreamCodec::Body::error) return in.size();
    ended = body == torii::handlers::UpstreamCodec::Body::done;
    out.clear();
    codec.take_output(out);
  }
  std::vector<std::pair<std::string, std::string>> trailers;
  codec.take_trailers(trailers);
  if (ended) reusable = codec.reusable(resp);
  return std::min(pos, in.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const torii::config::ProxyConfig cfg;
  const size_t step = 1 + data[0] % 64;  // the first byte says how the rest is cut
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);

  GrpcCodec first(cfg);
  std::unique_ptr<torii::upstream::ConnectionState> none;
  check(first.adopt_connection(none));  // a new connection
  bool reusable = false;
  const size_t used = run_call(first, in, step, reusable);
  if (!reusable) return 0;
  std::unique_ptr<torii::upstream::ConnectionState> kept = first.detach_connection();
  check(kept != nullptr);
  in.remove_prefix(used);

  // While idle: the next piece is what the upstream sends unasked.
  const size_t idle = in.empty() ? 0 : std::min<size_t>(in.size(), uint8_t(in[0]));
  if (!in.empty()) in.remove_prefix(1);
  std::string reply;
  if (idle > 0 && !kept->idle_input(in.substr(0, std::min(idle, in.size())), reply)) return 0;
  in.remove_prefix(std::min(idle, in.size()));

  // The next call on the kept session, or a refusal of the connection.
  GrpcCodec second(cfg);
  if (!second.adopt_connection(kept)) {
    check(kept != nullptr);  // refused: the caller still owns it, and closes it
    return 0;
  }
  check(kept == nullptr);
  run_call(second, in, step, reusable);
  return 0;
}
