#include "handlers/memcached/memcached_handler.h"

#include <memory>
#include <string>

#include "config/cgi_config.h"
#include "handlers/memcached/memcached_codec.h"
#include "handlers/proxy.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/variables.h"
#include "log/error_log.h"

namespace torii::handlers {

HandlerResult serve_memcached(http::Exchange& ex) {
  if (ex.req.method != http::Method::get && ex.req.method != http::Method::head) return HandlerResult::error(405);
  const auto& cfg = *ex.settings().memcached;
  const std::string key = http::render(cfg.memcached_key, ex);
  if (key.empty()) {
    TORII_LOG_EX(ex, error, "the \"$memcached_key\" variable is not set%s", http::log_context(ex).c_str());
    return HandlerResult::error(500);
  }
  serve_upstream(ex, cfg.upstream, std::make_unique<memcached::MemcachedCodec>(ex, cfg, key));
  return HandlerResult::done();
}

}  // namespace torii::handlers
