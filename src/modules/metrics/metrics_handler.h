// The `metrics;` location handler: the Prometheus text of the process.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::metrics {

void serve_metrics(http::Exchange& ex);

}  // namespace torii::metrics
