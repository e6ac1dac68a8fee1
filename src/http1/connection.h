// An HTTP/1.x downstream connection: owns the socket, the read buffer, the
// output queue and the timers, and drives the parser (a pure transform)
// and the request pipeline. States are explicit; the object is destroyed
// only by its worker at the end of a loop turn, never inside a callback.
#pragma once

#include <sys/socket.h>

#include <memory>
#include <optional>
#include <string>

#include "core/event_loop.h"
#include "core/recycled.h"
#include "core/timer_wheel.h"
#include "core/worker.h"
#include "http/exchange.h"
#include "http1/output_queue.h"
#include "http1/parser.h"
#include "modules/stub_status/counters.h"
#include "net/transport.h"

namespace torii::http1 {

class Connection final : public core::IoHandler, public http::ResponseSink, public core::Recycled<Connection> {
 public:
  Connection(core::Worker& worker, std::unique_ptr<net::Transport> transport, const sockaddr_storage& peer,
             std::shared_ptr<core::ListenBinding> binding,
             std::shared_ptr<const net::ProxyProtocolAddrs> proxy_protocol = nullptr);
  ~Connection() override;

  void start();
  void on_io(uint32_t events) override;
  // Graceful stop: close now if idle (once keepalive_min_timeout has
  // passed since the last response), else after the response in flight.
  void drain();
  // Idle on an address that left the config: the worker closes it.
  bool idle_on_retired() const { return binding_->retired && state_ == State::reading_head && in_.empty(); }
  // Descriptors ran out and connections wait to be accepted: this one, if
  // it waits for a request with its last response handed to the socket,
  // ends after that request (Connection: close). One that a previous call
  // told so and that has stayed quiet for two seconds since, with nothing
  // unread or unsent in its socket, closes now: a client that sends soon
  // after a response is not cut off, one that went quiet gives its
  // descriptor back.
  void end_keepalive();

  // ResponseSink
  void send_head(const http::ResponseHead& head) override;
  void send_body(std::string_view data) override;
  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override;
  void finish() override;
  // Kept for the last chunk when the client said `TE: trailers`.
  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) override;
  void send_interim(const http::ResponseHead& head) override;
  void abort() override;
  void read_body(http::BodyReader* reader) override;
  void resume_body() override;
  size_t queued_bytes() const override { return out_.memory_bytes(); }
  void set_drain_callback(std::function<void()> cb) override;

 private:
  enum class State {
    handshaking,   // TLS handshake in progress
    reading_head,  // waiting for (the rest of) a request head
    reading_body,  // the response may be out; the request body is read and dropped
    writing,       // the request is complete; waiting for the response to drain
    lingering,     // response sent, write side shut: draining input before close
    closed,
  };

  void drive();
  // HTTP/2 (`http2`): the client preface, or bytes that start with its
  // request line "PRI * HTTP/2.0" and then go wrong: a client speaking
  // HTTP/2 with a bad preface, which the HTTP/2 side answers with
  // GOAWAY(PROTOCOL_ERROR) (RFC 9113 3.4) rather than a 400 page.
  enum class PrefaceMatch : uint8_t { no, partial, http2 };
  static PrefaceMatch match_h2_preface(std::string_view in);
  void hand_over_to_http2();
  // Reads into `buf` until EAGAIN or `limit` bytes; false if the peer closed.
  bool fill_buffer(std::string& buf, size_t limit);
  void process();
  void on_head(size_t head_len);
  bool consume_buffered_body();
  bool body_held() const;
  bool validate_buffered_body();
  void schedule_drive();
  void respond_error(int status, const char* reason);
  void start_exchange();
  void finish_request();
  // Writes the access log line once: after the last byte of the response
  // left, or when the connection ends before that.
  void log_exchange();
  // The handler is still at work and the client sent something (see .cc).
  bool watch_client();
  void start_next_request();
  bool flush_output();
  // A write would block: wait for EPOLLOUT, registering it the first time.
  void wait_writable();
  void arm_timer(int64_t ms);
  // The wait for the next request: a TLS connection gives its record
  // buffers back after kShedAfterMs of it, then waits the rest.
  void arm_idle_timer(int64_t ms);
  static void on_timer(void* self);
  void on_timeout();
  void start_lingering_close();
  void arm_linger_timer();
  bool keepalive_disabled_for(const http::Exchange& ex) const;
  void close_now();
  const config::Server& default_server() const { return *binding_->group->default_server; }
  const config::Server& first_server() const;

  core::Worker& worker_;
  std::unique_ptr<net::Transport> transport_;
  std::shared_ptr<core::ListenBinding> binding_;
  std::shared_ptr<const config::Config> config_;  // this request's snapshot
  const config::Server* server_ = nullptr;        // this request's server
  http::ConnectionInfo info_;
  bool idle_keepalive() const;
  State state_ = State::reading_head;
  bool readable_ = true;  // edge-triggered: assume data until EAGAIN
  // The peer's FIN was reported (EPOLLRDHUP): a short read no longer means
  // the socket is empty, since the end of the stream is still to be read
  // and no new edge will announce it.
  bool peer_closing_ = false;
  bool writable_ = true;
  bool watching_writes_ = false;  // EPOLLOUT registered (after the first blocked write)
  bool draining_ = false;
  bool keep_alive_ = true;
  bool next_pipelined_ = false;  // the next request's bytes were here before it began ($pipe)
  bool chunked_response_ = false;
  std::vector<std::pair<std::string, std::string>> trailers_;  // for the response's last chunk
  bool use_sendfile_ = false;
  bool nodelay_set_ = false;
  bool corked_ = false;       // TCP_CORK set for a last response (tcp_nopush)
  bool shed_due_ = false;     // the idle timer first fires to release the TLS buffers
  bool h2c_ = false;  // a client preface here starts HTTP/2

  std::string in_;       // read buffer; the parser sees in_[head_start_..)
  size_t head_start_ = 0;
  size_t in_limit_ = 0;  // most bytes buffered for one head
  // Bytes after the head while a body is read. Kept apart from in_ so that
  // growing it never moves the bytes the request head's views point at.
  std::string body_in_;
  int64_t keepalive_ms_ = 75'000;
  int64_t keepalive_min_ms_ = 0;  // keepalive_min_timeout of the last response's location
  int64_t idle_since_ms_ = 0;  // waiting for a request since (or told to end keep-alive since)
  static constexpr int64_t kQuietBeforeReclaimMs = 2000;
  static constexpr int64_t kShedAfterMs = 1000;
  // What one request needs while it is read and answered, made when its
  // first byte arrives: an idle keep-alive connection holds none of it.
  struct PendingRequest final : core::Recycled<PendingRequest> {
    PendingRequest(const ParserLimits& limits, http::ResponseSink& sink, const http::ConnectionInfo& info,
                   http::WorkerServices& services)
        : parser(limits), exchange(sink, info, services) {}
    RequestParser parser;
    http::Exchange exchange;
  };
  void begin_request();
  std::unique_ptr<PendingRequest> request_;
  BodyDecoder body_;
  bool body_pending_ = false;
  OutputQueue out_;
  size_t head_len_ = 0;

  http::BodyReader* body_reader_ = nullptr;  // the handler reading the body, if any
  bool body_paused_ = false;
  bool continue_sent_ = false;
  size_t interim_bytes_ = 0;  // 103 Early Hints written for this request: not part of its body
  bool log_pending_ = false;   // a request head was read and its line is not written yet
  bool client_eof_ = false;    // the client closed its side (after its request, or while the handler went on)
  uint64_t sent_mark_ = 0;     // out_.bytes_written() when this request's response began
  bool tunnel_ = false;  // after a 101: client bytes go to the body reader as they come
  std::function<void()> drain_cb_;
  bool in_drive_ = false;
  bool drive_scheduled_ = false;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);  // for deferred work

  core::Timer timer_;
  int64_t linger_deadline_ = 0;
  // The last response's lingering_close, lingering_time, lingering_timeout.
  int64_t lingering_time_ms_ = 30'000;
  int64_t lingering_timeout_ms_ = 5'000;
  config::CoreSettings::LingeringClose lingering_close_ = config::CoreSettings::LingeringClose::on;
  bool body_unread_ = false;  // a request body was left unread: the client may still be sending it
  stub_status::ReadingMark reading_;  // a request head has begun to arrive
};

}  // namespace torii::http1
