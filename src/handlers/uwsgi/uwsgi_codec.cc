#include "handlers/uwsgi/uwsgi_codec.h"

#include "handlers/cgi_params.h"
#include "http/exchange.h"
#include "log/error_log.h"
#include "upstream/uwsgi/packet.h"

namespace torii::handlers::uwsgi {

namespace {

class VarsWriter final : public CgiParamSink {
 public:
  explicit VarsWriter(upstream::uwsgi::PacketBuilder& b) : b_(b) {}
  void add(std::string_view name, std::string_view value) override { b_.add(name, value); }

 private:
  upstream::uwsgi::PacketBuilder& b_;
};

}  // namespace

bool UwsgiCodec::request_head(RequestBody, int64_t, std::string& out) {
  const size_t start = out.size();
  upstream::uwsgi::PacketBuilder packet(out);
  VarsWriter vars(packet);
  build_cgi_params(ex_, cfg_, vars);
  packet.add_raw(cfg_.uwsgi_string);
  if (!packet.finish(cfg_.modifier1, cfg_.modifier2)) {
    // nginx refuses the request (500); here the application gets what fits
    // of the params, without the request's headers.
    TORII_LOG(error, "uwsgi request is too big: %zu bytes, request headers left out", out.size() - start);
    out.resize(start);
    upstream::uwsgi::PacketBuilder bare(out);
    auto params_only = cfg_;
    params_only.upstream.pass_request_headers = false;
    VarsWriter only(bare);
    build_cgi_params(ex_, params_only, only);
    bare.add_raw(cfg_.uwsgi_string);
    bare.finish(cfg_.modifier1, cfg_.modifier2);
  }
  return false;
}

}  // namespace torii::handlers::uwsgi
