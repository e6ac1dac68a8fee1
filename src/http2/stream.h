// One HTTP/2 stream: a request decoded from nghttp2's callbacks into the
// shared RequestHead, its Exchange, and the ResponseSink the handlers write
// into. Response bytes wait here until nghttp2 asks for them (the data
// source), so a stream never holds more than the handler queued: flow
// control reaches the handler through queued_bytes() and the drain callback.
// Request body bytes wait here, unacknowledged, until the handler takes them,
// so the client's window closes when the handler stops reading.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/recycled.h"
#include "http/exchange.h"
#include "http/field_section.h"
#include "http/response.h"
#include "http/stream_body.h"

namespace torii::http2 {

class Session;

class Stream final : public http::ResponseSink, private http::StreamBody::Owner, public core::Recycled<Stream> {
 public:
  Stream(Session& session, int32_t id);
  ~Stream() override;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int32_t id() const { return id_; }

  // ---- request, fed by the session's nghttp2 callbacks ---------------------
  // One decoded field (nghttp2 has validated it as HTTP/2 requires). The
  // buffers are kept by reference: header views point into them.
  void add_field(nghttp2_rcbuf* name, nghttp2_rcbuf* value, size_t field_limit, size_t list_limit);
  // The header block ended: the request can run once the session is out of
  // nghttp2's callbacks. `end_stream`: no body follows.
  void headers_done(bool end_stream) {
    headers_done_ = true;
    request_body_.headers_done(end_stream);
  }
  bool headers_complete() const { return headers_done_; }
  // Body bytes; kept until the handler's reader takes them.
  void on_data(const uint8_t* data, size_t len);
  void on_remote_end() { request_body_.on_remote_end(); }

  // Builds the exchange and runs the request through the pipeline.
  void run();
  // Hands buffered body bytes to the handler's reader, acknowledging them.
  void deliver_body();
  // nghttp2 closed the stream (response done, or reset by either side).
  void on_close(uint32_t error_code);
  bool closed() const { return closed_; }
  bool started() const { return exchange_.has_value(); }
  bool response_complete() const { return eof_sent_; }

  // ---- response, pulled by the session ------------------------------------
  bool head_ready() const { return head_ != nullptr && !submitted_; }
  // Submits HEADERS (and the data source when a body follows).
  int submit();
  // The data source: how many bytes the next DATA frame carries, and the
  // copy of those bytes into the session's output.
  ssize_t read_length(size_t max, uint32_t* flags);
  bool write_data(std::string& out, size_t len);
  bool blocked_by_window() const { return submitted_ && !deferred_ && !eof_sent_ && !closed_; }
  // When the client's silence on a body we are reading ends this stream
  // (client_body_timeout): INT64_MAX while we are not waiting for it.
  int64_t body_deadline() const;
  // The deadline passed: 408 (or a reset once the head is out).
  void body_timed_out();
  // The 408 went out whole: the rest of the body is not wanted (RFC 9113
  // 8.1: a complete response, then RST_STREAM(NO_ERROR)).
  bool reset_waiting() const { return reset_after_response_ && !closed_; }
  bool reset_due() const { return reset_waiting() && eof_sent_; }
  void reset_now();

  // A drain callback is due (queued memory fell below the low mark).
  bool drain_due() const;
  void submit_trailers(uint32_t* flags);
  void fire_drain();

  // ---- ResponseSink -------------------------------------------------------
  void send_head(const http::ResponseHead& head) override;
  void send_interim(const http::ResponseHead& head) override;  // a HEADERS frame with :status 103
  void send_body(std::string_view data) override;
  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override;
  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) override {
    trailers_ = std::move(trailers);
  }
  void finish() override;
  void read_body(http::BodyReader* reader) override;
  void resume_body() override;
  size_t queued_bytes() const override { return queued_memory_; }
  void set_drain_callback(std::function<void()> cb) override;

  http::Exchange* exchange() { return exchange_ ? &*exchange_ : nullptr; }

 private:
  // A piece of the response body: memory, or a range of an open file.
  struct Piece {
    std::string data;
    std::shared_ptr<const http::OpenFile> file;
    int64_t offset = 0;
    int64_t length = 0;  // file bytes left; memory pieces use data.size() - consumed
    size_t consumed = 0;
  };

  bool has_pieces() const { return first_piece_ < pieces_.size(); }
  Piece& front_piece() { return pieces_[first_piece_]; }
  void push_piece(Piece p);
  void pop_piece();
  void clear_pieces();
  // Appends `k` bytes of a file piece, read at its offset. False on a read error.
  static bool pread_into(std::string& out, const Piece& p, size_t k);

  void output_changed();
  // http::StreamBody::Owner
  void acknowledge_body(size_t n) override;
  void cancel_stream() override;
  bool stream_closed() const override { return closed_; }

  Session& session_;
  int32_t id_;

  // Request fields, kept alive by reference until the stream ends.
  std::vector<nghttp2_rcbuf*> rcbufs_;
  http::FieldSection head_fields_;  // the request head as decoded, until run()
  bool headers_done_ = false;

  std::optional<http::Exchange> exchange_;

  http::StreamBody request_body_{*this};
  bool reset_after_response_ = false;

  // Response.
  const http::ResponseHead* head_ = nullptr;
  // A queue: pieces_[first_piece_] is the front. A vector, not a deque:
  // most responses are one piece, and a deque allocates twice to hold it.
  std::vector<Piece> pieces_;
  size_t first_piece_ = 0;
  int64_t queued_total_ = 0;      // memory and file bytes not yet framed
  size_t queued_memory_ = 0;
  bool finished_ = false;
  bool submitted_ = false;
  bool deferred_ = false;         // the data source said "no data yet"
  bool eof_sent_ = false;
  bool closed_ = false;
  std::vector<std::pair<std::string, std::string>> trailers_;  // sent as HEADERS after the last DATA
  std::function<void()> drain_cb_;
};

}  // namespace torii::http2
