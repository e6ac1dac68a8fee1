#include "modules/early_body/early_body.h"

#include "config/config.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/variables.h"
#include "http/whole_body.h"
#include "log/error_log.h"

namespace torii::early_body {

bool start(http::Exchange& ex, void (*then)(http::Exchange&)) {
  // The client's request only, before any location (nginx runs it from
  // ngx_http_process_request, for the main request).
  if (!ex.server || ex.location || ex.access.subrequest || ex.background || ex.body_source || !ex.services().loop)
    return false;
  const auto& settings = ex.server->settings;
  if (settings.client_body_early_read.empty() || !ex.has_body()) return false;
  if (!http::any_true(settings.client_body_early_read, ex)) return false;
  if (settings.client_max_body_size > 0 && ex.req.content_length > settings.client_max_body_size) {
    TORII_LOG_EX(ex, error, "client intended to send too large body: %lld bytes%s",
              static_cast<long long>(ex.req.content_length), http::log_context(ex).c_str());
    ex.close_connection = true;
    http::send_error(ex, 413);
    return true;
  }
  http::read_whole_body(ex, then);
  return true;
}

}  // namespace torii::early_body
