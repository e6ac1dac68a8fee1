// libFuzzer target for the HTTP/2 server session: the input is what a
// client sends after the preface, cut into reads at points the input
// chooses. Requests run a tiny in-memory handler (a body, a streamed body,
// a body read), and the output is drained between reads with a small
// batch, so flow control, resets and GOAWAY paths all see hostile input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/loader.h"
#include "core/worker.h"
#include "http/exchange.h"
#include "http2/session.h"

namespace {

using namespace torii;

class Host : public http2::SessionHost {
 public:
  http::WorkerServices svc;
  int64_t now = 0;
  void run_request(http::Exchange& ex) override {
    http::ResponseHead head;
    if (ex.req.path.size() % 3 == 0) head.content_length = 5;
    ex.send_head(std::move(head));
    ex.send_body("hello");
    if (ex.req.path.size() % 2 == 0) ex.send_body(std::string(ex.req.path.size() * 100, 'x'));
    ex.finish();
  }
  void log_request(http::Exchange&) override {}
  void wake() override {}
  int64_t now_ms() override { return now += 7; }
  http::WorkerServices& services() override { return svc; }
};

std::shared_ptr<core::ListenBinding> binding() {
  static std::shared_ptr<core::ListenBinding> b = [] {
    auto cfg = config::load_from_string(
        "events {} http { server { listen 127.0.0.1:1; http2 on; large_client_header_buffers 2 1k; } }", "/tmp/", "");
    auto bind = std::make_shared<core::ListenBinding>();
    bind->config = *cfg;
    bind->group = &bind->config->listen_groups[0];
    return bind;
  }();
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  Host host;
  http::ConnectionInfo info;
  info.remote_addr = "127.0.0.1";
  http2::Session session(host, info, binding());
  if (!session.start()) return 0;
  std::string out;
  session.produce(out, 4096);
  std::string input = kPreface;
  input.append(reinterpret_cast<const char*>(data), size);
  size_t pos = 0;
  size_t step = size ? size_t(data[0]) * 7 + 1 : 1;
  while (pos < input.size()) {
    size_t n = std::min(step, input.size() - pos);
    if (!session.receive(input.data() + pos, n)) break;
    pos += n;
    session.service();
    out.clear();
    session.produce(out, 4096);
    session.collect_closed();
  }
  out.clear();
  session.produce(out, 1 << 20);
  session.abort_streams();
  return 0;
}
