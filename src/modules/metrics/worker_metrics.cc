#include "modules/metrics/worker_metrics.h"

#include <chrono>
#include <cstdlib>

#include "config/config.h"
#include "http/exchange.h"

namespace torii::metrics {

namespace {

std::mutex g_registry_mu;
std::vector<std::unique_ptr<WorkerMetrics>> g_workers;  // by worker index; never shrinks
thread_local WorkerMetrics* t_current = nullptr;

std::atomic<uint64_t> g_reloads{0};
std::atomic<uint64_t> g_reload_failures{0};
std::atomic<uint64_t> g_generation{1};  // the config loaded at start is generation 1

Protocol protocol_of(int version) {
  switch (version) {
    case 10: return http10;
    case 20: return http2;
    case 30: return http3;
    default: return http11;
  }
}

// The last try's time from $upstream_response_time ("0.012, 0.250"), in µs.
bool last_upstream_time_us(const std::string& list, uint64_t& us) {
  if (list.empty()) return false;
  size_t start = list.rfind(' ');
  start = start == std::string::npos ? 0 : start + 1;
  const char* p = list.c_str() + start;
  if (*p < '0' || *p > '9') return false;
  char* end = nullptr;
  double s = std::strtod(p, &end);
  if (end == p) return false;
  us = uint64_t(s * 1e6 + 0.5);
  return true;
}

}  // namespace

void Histogram::observe_us(uint64_t us) {
  const double s = double(us) / 1e6;
  size_t i = 0;
  while (i < kDurationBuckets.size() && s > kDurationBuckets[i]) ++i;
  buckets[i].add(1);  // cumulated at scrape time
  count.add(1);
  sum_us.add(us);
}

void bind_worker(int index) {
  std::lock_guard lock(g_registry_mu);
  if (index < 0) return;
  if (size_t(index) >= g_workers.size()) g_workers.resize(size_t(index) + 1);
  if (!g_workers[size_t(index)]) g_workers[size_t(index)] = std::make_unique<WorkerMetrics>();
  t_current = g_workers[size_t(index)].get();
}

void record_connection(ConnectionProtocol p) {
  if (WorkerMetrics* m = t_current) m->connections[p].add(1);
}

void record_request(const http::Exchange& ex) {
  WorkerMetrics* m = t_current;
  if (!m || !ex.config || !ex.config->metrics_enabled || !ex.server) return;
  thread_local std::string name;
  name.assign(ex.server->names.empty() || ex.server->names[0].name.empty() ? "_" : ex.server->names[0].name);
  auto it = m->servers.find(name);
  if (it == m->servers.end()) {
    std::lock_guard lock(m->mu);
    it = m->servers.emplace(name, std::make_unique<ServerCounters>()).first;
  }
  int cls = ex.status / 100 - 1;
  if (cls < 0 || cls >= kStatusClasses) cls = kStatusClasses - 1;
  it->second->requests[protocol_of(ex.req.version)][cls].add(1);
  auto elapsed = std::chrono::steady_clock::now() - ex.start;
  m->request_duration.observe_us(uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count()));
  uint64_t us = 0;
  if (last_upstream_time_us(ex.upstream_response_time, us)) m->upstream_duration.observe_us(us);
  m->bytes_in.add(uint64_t(std::max<int64_t>(ex.request_length, 0)));
  m->bytes_out.add(uint64_t(std::max<int64_t>(ex.header_bytes, 0) + std::max<int64_t>(ex.body_bytes_sent, 0)));
  if (const uint8_t s = ex.access.limit_req_status; s >= 1 && s <= std::size(m->limit_req)) m->limit_req[s - 1].add(1);
  if (const uint8_t s = ex.access.limit_conn_status; s >= 1 && s <= std::size(m->limit_conn)) m->limit_conn[s - 1].add(1);
}

void note_reload(bool loaded) {
  g_reloads.fetch_add(1, std::memory_order_relaxed);
  if (loaded) {
    g_generation.fetch_add(1, std::memory_order_relaxed);
  } else {
    g_reload_failures.fetch_add(1, std::memory_order_relaxed);
  }
}
uint64_t reloads_total() { return g_reloads.load(std::memory_order_relaxed); }
uint64_t reload_failures_total() { return g_reload_failures.load(std::memory_order_relaxed); }
uint64_t config_generation() { return g_generation.load(std::memory_order_relaxed); }

std::vector<WorkerMetrics*> all_workers() {
  std::lock_guard lock(g_registry_mu);
  std::vector<WorkerMetrics*> out;
  for (auto& w : g_workers)
    if (w) out.push_back(w.get());
  return out;
}

}  // namespace torii::metrics
