// One thread of a run: its share of the connections on its own epoll loop,
// its share of the requests (closed or open loop), its own Stats. Nothing is
// shared with the other threads while it runs but the start gate, the stop
// flag and the progress counters.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "load/connection.h"
#include "load/recycling_allocator.h"
#include "load/request_source.h"
#include "load/run_context.h"
#include "load/start_gate.h"
#include "load/stats.h"

namespace torii::load {

class Worker final : public ConnectionHost {
 public:
  Worker(const RunContext& run, unsigned index, StartGate& gate, const std::atomic<bool>& stop);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // The thread's body: warm up, wait at the gate, run, close everything.
  void run();

  const Stats& result() const { return stats_; }
  // When this thread's last request finished (-n) or the run ended (-d).
  int64_t end_ns() const { return end_ns_; }
  // Set when the thread could not run at all.
  const std::string& setup_error() const { return setup_error_; }

  // Read by the progress line from another thread.
  std::atomic<uint64_t> progress_requests{0};
  std::atomic<uint64_t> progress_failed{0};
  std::atomic<bool> done{false};

  // ConnectionHost
  int epoll_fd() const override { return epoll_fd_; }
  char* read_buffer() override { return read_buffer_.get(); }
  size_t read_buffer_size() const override { return kReadBufferSize; }
  void ready(ClientConnection& c) override;
  void ready_next_turn(ClientConnection& c) override;
  void flush_later(ClientConnection& c) override;
  void deadline_at(int64_t due_ns) override { earliest_deadline_ = std::min(earliest_deadline_, due_ns); }
  void completed(int64_t from_ns, int status, int64_t now_ns) override;
  void failed(int64_t from_ns, ErrorKind kind, const char* why) override;
  void retry(int64_t from_ns) override;
  Stats& stats() override { return stats_; }
  nghttp2_mem* h2_allocator() override { return allocator_.nghttp2(); }

 private:
  static constexpr size_t kReadBufferSize = 64 * 1024;

  bool setup();
  void warm_up();
  void loop();
  // Hands requests to connections that have room, while requests are available.
  void pump(int64_t now);
  void flush_all();
  void arm_timer(int64_t now);
  // Runs the connections' own timers that are due; returns the next one.
  int64_t fire_deadlines(int64_t now);
  // Waits for events up to `until_ns` (or not at all) and dispatches them.
  void poll(int64_t now, int64_t until_ns);
  void housekeeping(int64_t now);

  const RunContext& run_;
  unsigned index_;
  StartGate& gate_;
  const std::atomic<bool>& stop_;
  RequestSource source_;
  RecyclingAllocator allocator_;  // outlives the connections' sessions
  Stats stats_;
  std::string setup_error_;
  int epoll_fd_ = -1;
  int timer_fd_ = -1;
  int64_t timer_armed_ = 0;
  std::unique_ptr<char[]> read_buffer_;
  std::vector<std::unique_ptr<ClientConnection>> connections_;
  std::vector<ClientConnection*> ready_;
  std::vector<ClientConnection*> later_;
  std::vector<ClientConnection*> flush_;
  // No connection's deadline is earlier (it may be earlier than the real
  // next one: a deadline that moved later is found when this passes).
  int64_t earliest_deadline_ = INT64_MAX;
  uint64_t in_flight_ = 0;
  int64_t last_done_ns_ = 0;
  int64_t end_ns_ = 0;
  int64_t next_housekeeping_ = 0;
};

}  // namespace torii::load
