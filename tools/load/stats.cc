#include "load/stats.h"

#include <cstdio>

namespace torii::load {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::connect: return "connect";
    case ErrorKind::tls: return "tls";
    case ErrorKind::reset: return "reset";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::protocol: return "protocol";
  }
  return "?";
}

void Stats::record_response(int status_code, uint64_t latency_ns) {
  ++requests;
  ++responses;
  latency.record(latency_ns);
  if (status_code == kNoStatus) {
    ++status[0];  // HTTP/0.9 (--hq): a whole body, and no status to judge
    return;
  }
  if (status_code >= 100 && status_code < 600) {
    ++status[size_t(status_code)];
  } else {
    ++status_other;
  }
  if (status_code < 200 || status_code >= 400) ++failed;
}

void Stats::record_error(ErrorKind kind, const char* detail) {
  ++requests;
  ++failed;
  auto i = size_t(kind);
  if (errors[i]++ == 0 && detail) std::snprintf(first_error[i].data(), first_error[i].size(), "%s", detail);
}

void Stats::merge(const Stats& o) {
  latency.merge(o.latency);
  requests += o.requests;
  responses += o.responses;
  failed += o.failed;
  for (size_t i = 0; i < status.size(); ++i) status[i] += o.status[i];
  status_other += o.status_other;
  for (size_t i = 0; i < kErrorKinds; ++i) {
    if (errors[i] == 0 && o.errors[i] != 0) first_error[i] = o.first_error[i];
    errors[i] += o.errors[i];
  }
  retried += o.retried;
  bytes_received += o.bytes_received;
  bytes_sent += o.bytes_sent;
  connects += o.connects;
  connects_h2 += o.connects_h2;
  connects_h3 += o.connects_h3;
  cpu_seconds += o.cpu_seconds;
  connect_failures += o.connect_failures;
  tls_handshakes += o.tls_handshakes;
  tls_resumed += o.tls_resumed;
  waiting_at_end += o.waiting_at_end;
}

}  // namespace torii::load
