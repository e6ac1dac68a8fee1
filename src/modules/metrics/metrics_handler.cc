#include "modules/metrics/metrics_handler.h"

#include "http/exchange.h"
#include "modules/metrics/exposition.h"

namespace torii::metrics {

void serve_metrics(http::Exchange& ex) {
  std::string body = render_prometheus(*ex.config);
  http::ResponseHead head;
  head.status = 200;
  head.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  head.add("Cache-Control", "no-store");
  head.content_length = int64_t(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
}

}  // namespace torii::metrics
