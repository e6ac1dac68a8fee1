#include "handlers/scgi/scgi_codec.h"

#include "handlers/cgi_params.h"
#include "upstream/scgi/netstring.h"

namespace torii::handlers::scgi {

namespace {

class HeadWriter final : public CgiParamSink {
 public:
  explicit HeadWriter(upstream::scgi::HeadBuilder& b) : b_(b) {}
  void add(std::string_view name, std::string_view value) override { b_.add(name, value); }

 private:
  upstream::scgi::HeadBuilder& b_;
};

}  // namespace

bool ScgiCodec::request_head(RequestBody body, int64_t length, std::string& out) {
  upstream::scgi::HeadBuilder head(body == RequestBody::none ? 0 : length);
  HeadWriter writer(head);
  build_cgi_params(ex_, cfg_, writer);
  head.finish(out);
  return false;
}

}  // namespace torii::handlers::scgi
