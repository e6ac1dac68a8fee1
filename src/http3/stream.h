// One HTTP/3 request stream: the fields nghttp3 decoded (QPACK) turned into
// the shared RequestHead, its Exchange, and the ResponseSink handlers write
// into. Unlike HTTP/2, the bytes handed to nghttp3 must stay where they are
// until the client acknowledges them (QUIC may retransmit them), so the
// response lives in two queues: pieces not yet handed over, and "in flight"
// buffers released by acknowledgements. Both count in queued_bytes(), so a
// slow reader (small window, lost packets) holds a streaming handler back
// instead of growing our memory; in-flight bytes per stream are capped by
// http3_stream_buffer_size.
#pragma once

#include <nghttp3/nghttp3.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/recycled.h"
#include "http/exchange.h"
#include "http/field_section.h"
#include "http/response.h"
#include "http/stream_body.h"

namespace torii::http3 {

class Session;

class Stream final : public http::ResponseSink, private http::StreamBody::Owner, public core::Recycled<Stream> {
 public:
  Stream(Session& session, int64_t id);
  ~Stream() override;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int64_t id() const { return id_; }

  // ---- request, fed by the session's nghttp3 callbacks ---------------------
  void add_field(nghttp3_rcbuf* name, nghttp3_rcbuf* value, size_t field_limit, size_t list_limit);
  void headers_done(bool fin) {
    headers_done_ = true;
    request_body_.headers_done(fin);
  }
  bool headers_complete() const { return headers_done_; }
  // When the silence of a client that owes this stream's handler body
  // bytes ends the request (client_body_timeout); INT64_MAX while none are owed.
  int64_t body_deadline() const;
  // That time came: 408, or a reset once the response has begun.
  void body_timed_out();
  // send_timeout: when a client that takes none of the response's waiting
  // bytes times out (INT64_MAX: nothing waits on it), and the reset then.
  int64_t send_deadline() const;
  void send_timed_out();
  // Part of the request head came in 0-RTT packets: it may be a replay.
  void mark_early_data() { early_data_ = true; }
  void on_data(const uint8_t* data, size_t len);
  void on_remote_end() { request_body_.on_remote_end(); }

  void run();
  void deliver_body();
  // nghttp3 closed the stream (response acknowledged, or reset).
  void on_close();
  bool closed() const { return closed_; }
  bool started() const { return exchange_.has_value(); }
  // The whole response was handed over (its end included).
  bool response_complete() const { return eof_sent_; }
  // The client's cancel of this stream was counted (rapid reset budget).
  bool cancel_counted() const { return cancel_counted_; }
  void mark_cancel_counted() { cancel_counted_ = true; }

  // ---- response, pulled by the session -------------------------------------
  bool head_ready() const { return head_ != nullptr && !submitted_ && !closed_; }
  void submit();
  // nghttp3's data reader: points `vec` at bytes that stay put until acked.
  nghttp3_ssize read_data(nghttp3_vec* vec, size_t veccnt, uint32_t* flags);
  void on_acked(uint64_t n);

  bool drain_due() const;
  void fire_drain();

  // ---- ResponseSink --------------------------------------------------------
  void send_head(const http::ResponseHead& head) override;
  void send_interim(const http::ResponseHead& head) override;  // nghttp3's informational response, 103
  void send_body(std::string_view data) override;
  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override;
  // Sent as a HEADERS frame after the last DATA (gRPC's grpc-status).
  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) override {
    trailers_ = std::move(trailers);
  }
  void finish() override;
  void abort() override;
  void read_body(http::BodyReader* reader) override;
  void resume_body() override;
  size_t queued_bytes() const override { return queued_memory_ + inflight_bytes_; }
  void set_drain_callback(std::function<void()> cb) override;

 private:
  struct Piece {
    std::string data;
    std::shared_ptr<const http::OpenFile> file;
    int64_t offset = 0;
    int64_t length = 0;
    size_t consumed = 0;
  };
  // Bytes nghttp3 holds pointers into, in stream order.
  struct InFlight {
    std::string data;
    std::shared_ptr<const http::OpenFile> file;  // bytes that are the cache's copy: no buffer of ours
    const char* ptr = nullptr;
    size_t len = 0;
    size_t acked = 0;
  };

  void output_changed();
  // http::StreamBody::Owner
  void acknowledge_body(size_t n) override;
  void cancel_stream() override;
  bool stream_closed() const override { return closed_; }
  void reset(uint64_t app_error);
  std::string take_buffer();

  Session& session_;
  int64_t id_;

  std::vector<nghttp3_rcbuf*> rcbufs_;
  http::FieldSection head_fields_;  // the request head as decoded, until run()
  bool headers_done_ = false;
  bool early_data_ = false;

  std::optional<http::Exchange> exchange_;

  http::StreamBody request_body_{*this};

  // Response.
  const http::ResponseHead* head_ = nullptr;
  std::vector<Piece> pieces_;
  size_t first_piece_ = 0;
  int64_t queued_total_ = 0;
  size_t queued_memory_ = 0;
  // Handed to nghttp3, not yet acknowledged. A deque: its elements never
  // move, and nghttp3 points into short strings' inline bytes too.
  std::deque<InFlight> inflight_;
  size_t inflight_bytes_ = 0;
  std::vector<std::string> spare_;  // file-read buffers to reuse
  bool finished_ = false;
  bool submitted_ = false;
  bool deferred_ = false;  // the reader said "would block": resume on more output
  bool eof_sent_ = false;
  std::vector<std::pair<std::string, std::string>> trailers_;
  // At the end of the body: the trailers, if any, end the stream instead.
  void submit_trailers(uint32_t* flags);
  bool closed_ = false;
  bool cancel_counted_ = false;
  bool reset_ = false;  // we reset it: no timeout applies any more
  int64_t send_activity_ms_ = 0;  // response bytes last handed over or acknowledged
  std::function<void()> drain_cb_;
};

}  // namespace torii::http3
