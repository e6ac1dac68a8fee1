// The server side of one HTTP/2 connection as a state machine over nghttp2:
// bytes in (receive), frames out (produce), no socket and no timer. nghttp2
// does framing, HPACK and flow control; this maps its callbacks onto
// streams (one Exchange each) and keeps the abuse counters. The I/O shell
// around it (http2::Connection) owns the transport and the timer; tests and
// the fuzzer drive it directly with a SessionHost of their own.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "http/exchange.h"
#include "http2/flood_guard.h"
#include "http2/frame_scanner.h"
#include "http2/session_memory.h"
#include "http2/stream_ledger.h"

namespace torii::core {
struct ListenBinding;
}

namespace torii::http2 {

class Stream;

// Stream ids waiting for one kind of work, run after nghttp2 returns. The
// batch being run and the ids queued meanwhile live in two vectors that
// swap roles, so neither is reallocated per request.
class IdQueue {
 public:
  void push(int32_t id) { pending_.push_back(id); }
  bool empty() const { return pending_.empty(); }
  // Runs `fn` on each id queued so far; ids queued by `fn` wait for the next call.
  template <class Fn>
  void run(Fn&& fn) {
    if (running_) {  // a nested call: its batch cannot reuse the busy vector
      std::vector<int32_t> ids;
      ids.swap(pending_);
      for (int32_t id : ids) fn(id);
      return;
    }
    running_ = true;
    batch_.swap(pending_);
    for (size_t i = 0; i < batch_.size(); ++i) fn(batch_[i]);
    batch_.clear();
    running_ = false;
  }

 private:
  std::vector<int32_t> pending_, batch_;
  bool running_ = false;
};

// What a session needs from its surroundings.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  virtual void run_request(http::Exchange& ex) = 0;  // http::run_request in the server
  virtual void log_request(http::Exchange& ex) = 0;  // the access log
  virtual void wake() = 0;                           // output is waiting: flush soon
  virtual int64_t now_ms() = 0;
  virtual http::WorkerServices& services() = 0;
};

class Session {
 public:
  Session(SessionHost& host, const http::ConnectionInfo& info, std::shared_ptr<core::ListenBinding> binding,
          const FloodLimits& flood = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Queues our SETTINGS. False if nghttp2 could not start.
  bool start();
  // Feeds bytes from the client and runs the requests they completed.
  // False: the connection is over (protocol error or abuse; a GOAWAY is
  // queued when one is due): flush what produce() gives, then close.
  bool receive(const char* data, size_t len);
  // Appends frames to `out` until it holds `limit` bytes or nothing is
  // left to send. False on a fatal nghttp2 error.
  bool produce(std::string& out, size_t limit);
  // Whether produce() would give anything: heads waiting to be submitted,
  // a reset waiting on its response, or frames nghttp2 has queued (and
  // may send). Cheaper than a produce() that finds nothing.
  bool has_output() const { return !submit_.empty() || resets_waiting_ || nghttp2_session_want_write(ng_); }
  // Work that must run outside nghttp2's callbacks: body bytes to handlers'
  // readers, drain callbacks that became due. True if anything ran (it may
  // have queued more output).
  bool service();

  // Graceful stop: GOAWAY, in-flight streams finish, no new ones start.
  void shutdown();
  // Immediate stop: GOAWAY with `error_code`; nothing more is read.
  void terminate(uint32_t error_code);

  bool want_read() const;
  bool want_write() const;
  // Nothing left to read or write: the connection can close.
  bool done() const { return !want_read() && !want_write(); }
  size_t open_streams() const { return streams_.size(); }
  // Some stream has response bytes that only a WINDOW_UPDATE can release.
  bool stalled() const;
  // The earliest client_body_timeout deadline of the streams reading a
  // body (INT64_MAX: none), and what to do when it passes.
  int64_t body_deadline() const;
  void expire_bodies(int64_t now_ms);
  bool going_away() const { return going_away_; }
  const char* abuse_reason() const { return abuse_reason_; }
  int64_t idle_timeout_ms() const { return idle_ms_; }
  uint64_t requests() const { return requests_; }

  // An idle connection's memory: the pages of nghttp2's frame buffer go
  // back to the kernel when no stream is open and nothing waits to be sent
  // (a no-op otherwise). The next frame faults in a fresh page.
  bool shed_idle_memory();  // false: not idle, nothing given back

  // Logs and drops every stream still open (the connection is closing).
  void abort_streams();
  // Destroys the streams that closed. Only when no stream's code is on the
  // stack (the I/O shell calls it at the end of each of its turns): a
  // stream closes inside nghttp2's callbacks, often inside its own call.
  // Freeing them per connection rather than per loop turn keeps their
  // memory in the allocator's per-thread cache for the next stream.
  void collect_closed();

  // ---- for streams --------------------------------------------------------
  nghttp2_session* ng() { return ng_; }
  // What nghttp2 holds for this session (see session_memory.h).
  const SessionMemory& memory() const { return memory_; }
  SessionHost& host() { return host_; }
  http::ConnectionInfo& info() { return info_; }
  const std::shared_ptr<core::ListenBinding>& binding() const { return binding_; }
  size_t chunk_size() const { return chunk_size_; }
  size_t body_window() const { return body_window_; }
  // A stream's state changed outside nghttp2's callbacks.
  void stream_output_changed(Stream& s);
  void stream_wants_delivery(Stream& s);
  void stream_drain_due(Stream& s);
  // Counts a stream that ended early; false if the client is abusive.
  bool count_reset();

 private:
  static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, nghttp2_rcbuf* name, nghttp2_rcbuf* value,
                       uint8_t flags, void* user);
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int on_data_chunk(nghttp2_session*, uint8_t flags, int32_t stream_id, const uint8_t* data, size_t len,
                           void* user);
  static int on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user);
  static int on_frame_not_send(nghttp2_session*, const nghttp2_frame* frame, int lib_error, void* user);
  static int send_data(nghttp2_session*, nghttp2_frame* frame, const uint8_t* framehd, size_t length,
                       nghttp2_data_source* source, void* user);

  Stream* find(int32_t id);
  // Hands bytes to nghttp2. False when the connection is over.
  bool feed(const char* data, size_t len);
  // Looks at a frame header as the scanner finds it, before nghttp2 has
  // taken the frames ahead of it: notes new streams, counts PRIORITY
  // frames. True if the frame must be checked (check_frame) once they
  // have been taken.
  bool note_frame(const FrameHeader& h);
  // What nghttp2, which forgets closed streams, would not enforce: frames
  // for closed streams (RFC 9113 5.1) and identifiers lower than the last
  // (5.1.1), PRIORITY on stream 0 (6.3). False on a connection error.
  bool check_frame(const FrameHeader& h);
  bool connection_error(uint32_t code, const char* what, int32_t id);
  void stream_error(uint32_t code, const char* what, int32_t id);
  void abuse(const char* reason);
  void run_ready();
  void submit_pending();
  // Renames our SETTINGS' private entry to MAX_CONCURRENT_STREAMS in the
  // frames at `p`; true once our SETTINGS was among them.
  static bool unmask_max_streams(char* p, size_t n);
  // Refuses stream `id` if http2_max_concurrent_streams are already open.
  bool refuse_excess_stream(int32_t id);

  SessionHost& host_;
  http::ConnectionInfo info_;  // $connection, $connection_requests: exchanges point here
  std::shared_ptr<core::ListenBinding> binding_;
  SessionMemory memory_;  // before ng_: nghttp2 frees into it when the session is deleted
  nghttp2_session* ng_ = nullptr;
  FloodGuard flood_;
  FrameScanner scanner_;
  StreamLedger ledger_;

  // Connection-level settings, from the address's default server at start.
  uint32_t max_streams_ = 128;
  size_t chunk_size_ = 8192;
  size_t body_window_ = 65535;
  size_t field_limit_ = 8192;
  size_t list_limit_ = 32768;
  int64_t idle_ms_ = 75'000;
  uint64_t max_requests_ = 1000;
  int64_t keepalive_time_ms_ = 3'600'000;  // keepalive_time: no new streams after this long
  uint64_t requests_ = 0;

  std::vector<std::unique_ptr<Stream>> streams_;  // open; find() looks them up by id
  std::vector<std::unique_ptr<Stream>> graveyard_;  // closed; destroyed by collect_closed()
  IdQueue ready_;    // header blocks complete: run after nghttp2 returns
  IdQueue submit_;   // heads to submit before the next send
  IdQueue deliver_;  // body bytes to hand to readers
  IdQueue drained_;  // drain callbacks due
  std::string* out_ = nullptr;      // produce()'s buffer, for the no-copy data callback
  size_t limit_ = 0;                // and its size limit
  bool in_callback_ = false;
  bool going_away_ = false;
  // The last stream id of our NO_ERROR GOAWAY (-1: none sent). Streams
  // above it were not accepted (RFC 9113 6.8): the client may send them
  // again, so they are refused, never run.
  int32_t goaway_last_id_ = -1;
  bool resets_waiting_ = false;  // a stream resets once its 408 is out (expire_bodies)
  bool max_streams_unmasked_ = false;  // our SETTINGS went out with the real identifier
  bool settings_acked_ = false;  // the client has applied our SETTINGS (and knows our limits)
  const char* abuse_reason_ = nullptr;
};

}  // namespace torii::http2
