// torii-load: an HTTP/1.1, HTTP/2 and HTTP/3 load generator, closed loop (as wrk and
// h2load) or open loop at a constant rate (as wrk2 and k6's
// constant-arrival-rate), with a k6-like summary.
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "load/clock.h"
#include "load/options.h"
#include "load/report.h"
#include "load/request_template.h"
#include "load/run_context.h"
#include "load/start_gate.h"
#include "load/tls_client.h"
#include "load/worker.h"

using namespace torii::load;

namespace {

constexpr int kUsageError = 2;
constexpr int kRunError = 1;

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

bool resolve(const Url& url, RunContext& run, std::string& error) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_family = AF_UNSPEC;
  addrinfo* result = nullptr;
  std::string port = std::to_string(url.port);
  int rv = getaddrinfo(url.host.c_str(), port.c_str(), &hints, &result);
  if (rv != 0 || !result) {
    error = "cannot resolve " + url.host + ": " + gai_strerror(rv);
    return false;
  }
  std::memcpy(&run.address, result->ai_addr, result->ai_addrlen);
  run.address_length = socklen_t(result->ai_addrlen);
  freeaddrinfo(result);
  // SNI carries host names only, never an address literal.
  in6_addr probe;
  if (inet_pton(AF_INET, url.host.c_str(), &probe) != 1 && inet_pton(AF_INET6, url.host.c_str(), &probe) != 1)
    run.server_name = url.host;
  return true;
}

std::string describe(const Options& o) {
  char buf[512];
  std::string what = o.requests ? std::to_string(o.requests) + " requests" : format_duration(uint64_t(o.duration_ns));
  std::string mode = o.rate > 0 ? "open loop at " + std::to_string(int64_t(o.rate)) + " req/s" : "closed loop";
  std::snprintf(buf, sizeof buf, "torii-load: %s, %u connection%s x %u stream%s, %u thread%s, %s, %s%s\n",
                o.protocol == Protocol::h3   ? "HTTP/3 over QUIC"
                : o.protocol == Protocol::hq ? "HTTP/0.9 over QUIC (hq-interop)"
                : o.urls[0].tls ? "https" : "http", o.connections, o.connections == 1 ? "" : "s", o.streams,
                o.streams == 1 ? "" : "s", o.threads, o.threads == 1 ? "" : "s", mode.c_str(), what.c_str(),
                o.connect_per_request ? ", a connection per request" : "");
  std::string text = buf;
  for (const Url& u : o.urls) text += "  " + std::string(u.tls ? "https://" : "http://") + u.authority + u.path + "\n";
  return text;
}

void print_progress(const std::vector<std::unique_ptr<Worker>>& workers, int64_t start, int64_t now) {
  uint64_t requests = 0, failed = 0;
  for (const auto& w : workers) {
    requests += w->progress_requests.load(std::memory_order_relaxed);
    failed += w->progress_failed.load(std::memory_order_relaxed);
  }
  double seconds = double(now - start) / 1e9;
  std::printf("\r\033[K  %5.0fs  %" PRIu64 " requests  %.0f/s  %" PRIu64 " failed", seconds, requests,
              seconds > 0 ? double(requests) / seconds : 0.0, failed);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = parse_options(argc, argv);
  if (!parsed) {
    std::fprintf(stderr, "torii-load: %s\n(torii-load --help lists the options)\n", parsed.error().c_str());
    return kUsageError;
  }
  const Options& options = *parsed;
  if (options.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::string body;
  if (!options.body_file.empty() && !read_file(options.body_file, body)) {
    std::fprintf(stderr, "torii-load: --body: cannot read %s: %s\n", options.body_file.c_str(), std::strerror(errno));
    return kUsageError;
  }
  RequestTemplates templates = build_templates(options, std::move(body));
  RunContext run{options, templates, {}, 0, nullptr, nullptr, {}};
  std::string error;
  if (!resolve(options.urls[0], run, error)) {
    std::fprintf(stderr, "torii-load: %s\n", error.c_str());
    return kRunError;
  }
  std::unique_ptr<TlsClient> tls;
  std::unique_ptr<QuicTls> quic;
  if (over_quic(options.protocol)) {
    auto created = QuicTls::create();
    if (!created) {
      std::fprintf(stderr, "torii-load: %s\n", created.error().c_str());
      return kRunError;
    }
    quic = std::move(*created);
    run.quic = quic.get();
  } else if (options.urls[0].tls) {
    auto created = TlsClient::create(options.protocol);
    if (!created) {
      std::fprintf(stderr, "torii-load: %s\n", created.error().c_str());
      return kRunError;
    }
    tls = std::move(*created);
    run.tls = tls.get();
  }

  // Many connections need many descriptors: take what the hard limit allows.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max &&
      files.rlim_cur < rlim_t(options.connections) + 64) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  // Signals go to this thread only, which turns SIGINT/SIGTERM into a stop
  // (the summary still prints); a closed socket is an error code, not a signal.
  signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::fputs(describe(options).c_str(), stdout);
  std::fflush(stdout);

  std::atomic<bool> stop{false};
  StartGate gate(options.threads);
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < options.threads; ++i) workers.push_back(std::make_unique<Worker>(run, i, gate, stop));
  for (auto& w : workers) threads.emplace_back([&w] { w->run(); });

  bool progress = isatty(STDOUT_FILENO);
  int64_t next_progress = 0;
  bool announced = false;
  for (;;) {
    bool all_done = true;
    for (const auto& w : workers) all_done = all_done && w->done.load(std::memory_order_acquire);
    if (all_done) break;
    timespec wait{0, 50 * 1'000'000};
    int sig = sigtimedwait(&signals, nullptr, &wait);
    if (sig == SIGINT || sig == SIGTERM) stop.store(true);
    int64_t start = gate.start_ns();
    int64_t now = now_ns();
    if (start != 0 && !announced) {
      // Connections (and their handshakes) are open: a script measuring
      // the server alongside starts its window here.
      std::puts("connections open, measuring");
      std::fflush(stdout);
      announced = true;
    }
    if (progress && start != 0 && now >= next_progress) {
      if (next_progress != 0) print_progress(workers, start, now);
      next_progress = now + kNsPerSec;
    }
  }
  for (auto& t : threads) t.join();
  if (progress) std::printf("\r\033[K");

  Stats total;
  int64_t end = 0;
  for (const auto& w : workers) {
    if (!w->setup_error().empty()) {
      std::fprintf(stderr, "torii-load: %s\n", w->setup_error().c_str());
      return kRunError;
    }
    total.merge(w->result());
    end = std::max(end, w->end_ns());
  }
  double seconds = double(end - gate.start_ns()) / 1e9;
  RunResult result{options, total, seconds > 0 ? seconds : 0};
  print_summary(stdout, result);
  if (!options.json_file.empty()) {
    std::ofstream out(options.json_file, std::ios::binary | std::ios::trunc);
    out << summary_json(result);
    if (!out.good()) {
      std::fprintf(stderr, "torii-load: --json: cannot write %s\n", options.json_file.c_str());
      return kRunError;
    }
  }
  return 0;
}
