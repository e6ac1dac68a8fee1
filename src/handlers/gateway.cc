#include "handlers/gateway.h"

#include <memory>

#include "config/cgi_config.h"
#include "handlers/fastcgi/fastcgi_codec.h"
#include "handlers/grpc/grpc_codec.h"
#include "handlers/proxy.h"
#include "handlers/scgi/scgi_codec.h"
#include "handlers/uwsgi/uwsgi_codec.h"
#include "http/exchange.h"

namespace torii::handlers {

HandlerResult serve_fastcgi(http::Exchange& ex) {
  if (auto decided = apply_try_files(ex)) return std::move(*decided);
  const auto& cfg = *ex.settings().fastcgi;
  if (!cfg.upstream.url_template.empty()) {
    http::Exchange* e = &ex;
    serve_gateway_with_variables(ex, cfg.upstream, [e, &cfg] { return std::make_unique<fastcgi::FastcgiCodec>(*e, cfg); });
    return HandlerResult::done();
  }
  serve_upstream(ex, cfg.upstream, std::make_unique<fastcgi::FastcgiCodec>(ex, cfg));
  return HandlerResult::done();
}

HandlerResult serve_uwsgi(http::Exchange& ex) {
  if (auto decided = apply_try_files(ex)) return std::move(*decided);
  const auto& cfg = *ex.settings().uwsgi;
  if (!cfg.upstream.url_template.empty()) {
    http::Exchange* e = &ex;
    serve_gateway_with_variables(ex, cfg.upstream, [e, &cfg] { return std::make_unique<uwsgi::UwsgiCodec>(*e, cfg); });
    return HandlerResult::done();
  }
  serve_upstream(ex, cfg.upstream, std::make_unique<uwsgi::UwsgiCodec>(ex, cfg));
  return HandlerResult::done();
}

HandlerResult serve_scgi(http::Exchange& ex) {
  if (auto decided = apply_try_files(ex)) return std::move(*decided);
  const auto& cfg = *ex.settings().scgi;
  if (!cfg.upstream.url_template.empty()) {
    http::Exchange* e = &ex;
    serve_gateway_with_variables(ex, cfg.upstream, [e, &cfg] { return std::make_unique<scgi::ScgiCodec>(*e, cfg); });
    return HandlerResult::done();
  }
  serve_upstream(ex, cfg.upstream, std::make_unique<scgi::ScgiCodec>(ex, cfg));
  return HandlerResult::done();
}

HandlerResult serve_grpc(http::Exchange& ex) {
  const auto& cfg = *ex.settings().grpc;
  serve_upstream(ex, cfg.upstream, std::make_unique<grpc::GrpcCodec>(ex, cfg.upstream));
  return HandlerResult::done();
}

}  // namespace torii::handlers
