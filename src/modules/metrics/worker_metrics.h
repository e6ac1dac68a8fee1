// Counters for the metrics handler. Each worker thread writes only its own
// WorkerMetrics (relaxed loads and stores of its own atomics: no lock, no
// read-modify-write, no cache line shared with another worker); a scrape
// sums every worker's. Process-wide counts (reloads) are plain atomics
// written off the request path.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace torii::http {
class Exchange;
}

namespace torii::metrics {

// A counter with one writer: an increment is a load and a store, not a
// locked add, and readers on other threads see a value that was true.
class Counter {
 public:
  void add(uint64_t n) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

enum Protocol : uint8_t { http10, http11, http2, http3, kProtocols };
// What a client connection spoke: HTTP/1.x, HTTP/2, HTTP/3 or hq-interop (HTTP/0.9 over QUIC).
enum ConnectionProtocol : uint8_t { conn_h1, conn_h2, conn_h3, conn_hq, kConnectionProtocols };
constexpr int kStatusClasses = 5;  // 1xx..5xx

// Upper bounds in seconds (Prometheus's "le"), then +Inf.
constexpr std::array<double, 12> kDurationBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,   1,    2.5,   5,    10};

struct Histogram {
  std::array<Counter, kDurationBuckets.size() + 1> buckets;  // last: +Inf
  Counter count;
  Counter sum_us;  // microseconds, so the sum stays an integer
  void observe_us(uint64_t us);
};

struct ServerCounters {
  Counter requests[kProtocols][kStatusClasses];
};

struct alignas(64) WorkerMetrics {
  Histogram request_duration;
  Histogram upstream_duration;
  Counter bytes_in;   // request line, headers and body
  Counter bytes_out;  // response head and body
  // Requests by limit_req's and limit_conn's outcome ($limit_req_status,
  // $limit_conn_status order), for locations with those limits.
  Counter limit_req[5];   // passed, delayed, rejected, delayed_dry_run, rejected_dry_run
  Counter limit_conn[3];  // passed, rejected, rejected_dry_run
  Counter connections[kConnectionProtocols];
  // By server name. The worker inserts under `mu` (once per name); the
  // scrape reads under it. Lookups by the worker itself take no lock.
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<ServerCounters>> servers;
};

// The calling worker thread's counters (created at the first call for `index`).
void bind_worker(int index);
// Counts one finished request on the calling worker (no-op off a worker).
void record_request(const http::Exchange& ex);
// Counts a client connection by protocol: an HTTP/1 one at its first
// request (one that turns to HTTP/2 counts there), an HTTP/2 one when it
// starts, a QUIC one when its handshake completes.
void record_connection(ConnectionProtocol p);

// Process-wide.
void note_reload(bool loaded);
uint64_t reloads_total();
uint64_t reload_failures_total();
uint64_t config_generation();

// Every worker's counters, for the scrape (they live as long as the process).
std::vector<WorkerMetrics*> all_workers();

}  // namespace torii::metrics
