#include "http2/session.h"

#include <algorithm>

#include "core/worker.h"
#include "http2/stream.h"
#include "log/error_log.h"

namespace torii::http2 {

namespace {

// The connection-level receive window: request bodies are held back per
// stream (each stream's window is what a handler lets in), so the
// connection's own window need not be a second limit.
constexpr int32_t kConnectionWindow = (1 << 30);

// nghttp2's defaults, stated so the defences are visible in one place.
constexpr size_t kMaxSettingsEntries = 32;      // entries per SETTINGS frame
constexpr size_t kMaxOutboundAcks = 1000;       // queued SETTINGS/PING ACKs
constexpr uint64_t kResetBurst = 1000;          // RST_STREAM token bucket
constexpr uint64_t kResetRate = 33;             // tokens per second
constexpr size_t kMaxContinuations = 8;         // CONTINUATION frames per header block

// SETTINGS_MAX_CONCURRENT_STREAMS is handed to nghttp2 under this private
// identifier and renamed on the wire (unmask_max_streams): the client sees
// the real limit, nghttp2 does not hold it. Once the client ACKs a real
// one, nghttp2 answers an excess stream with GOAWAY(PROTOCOL_ERROR),
// ending every stream of the connection; an identifier it does not know
// it sends as is and skips when the ACK applies our SETTINGS, so its own
// limit stays unlimited and on_begin_headers refuses the excess stream
// alone, as nginx does.
constexpr uint16_t kPrivateMaxStreams = 0xf00d;
constexpr size_t kFrameHeaderSize = 9;
constexpr size_t kSettingsEntrySize = 6;

uint32_t read_be(const char* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | uint8_t(p[i]);
  return v;
}

struct Callbacks {
  nghttp2_session_callbacks* cbs = nullptr;
  ~Callbacks() { nghttp2_session_callbacks_del(cbs); }
};

struct Options {
  nghttp2_option* opt = nullptr;
  ~Options() { nghttp2_option_del(opt); }
};

}  // namespace

Session::Session(SessionHost& host, const http::ConnectionInfo& info, std::shared_ptr<core::ListenBinding> binding,
                 const FloodLimits& flood)
    : host_(host), info_(info), binding_(std::move(binding)), flood_(flood) {
  const config::Server& srv = *binding_->group->default_server;
  const auto& h2 = srv.http2_settings;
  max_streams_ = h2.max_concurrent_streams;
  chunk_size_ = std::max<size_t>(1, h2.chunk_size);
  body_window_ = std::min<size_t>(h2.body_preread_size, 0x7fffffff);
  field_limit_ = srv.large_client_header_buffers.size;
  list_limit_ = srv.large_client_header_buffers.size * srv.large_client_header_buffers.number;
  idle_ms_ = srv.settings.keepalive_timeout.count();
  max_requests_ = srv.settings.keepalive_requests;
  keepalive_time_ms_ = srv.settings.core.keepalive_time.count();
}

Session::~Session() {
  // Streams hold nghttp2 buffers by reference: they go before the session.
  streams_.clear();
  graveyard_.clear();
  nghttp2_session_del(ng_);
}

bool Session::start() {
  Callbacks c;
  if (nghttp2_session_callbacks_new(&c.cbs) != 0) return false;
  nghttp2_session_callbacks_set_on_begin_headers_callback(c.cbs, &Session::on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback2(c.cbs, &Session::on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(c.cbs, &Session::on_frame_recv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(c.cbs, &Session::on_data_chunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(c.cbs, &Session::on_stream_close);
  nghttp2_session_callbacks_set_on_frame_not_send_callback(c.cbs, &Session::on_frame_not_send);
  nghttp2_session_callbacks_set_send_data_callback(c.cbs, &Session::send_data);

  Options o;
  if (nghttp2_option_new(&o.opt) != 0) return false;
  // Body bytes are acknowledged when a handler takes them, not on arrival.
  nghttp2_option_set_no_auto_window_update(o.opt, 1);
  // A closed stream's memory goes back at once: nghttp2 keeps no closed
  // streams for a priority tree. (With NO_RFC7540_PRIORITIES announced
  // it would not anyway.) What RFC 9113 5.1 needs to know about closed
  // streams, one byte each, is in ledger_.
  nghttp2_option_set_no_closed_streams(o.opt, 1);
  // Most clients (curl, browsers, Go) do not announce RFC 9218, and send
  // RFC 7540 priorities: for them nghttp2 checks PRIORITY frames (a
  // stream depending on itself is a PROTOCOL_ERROR, RFC 9113 5.3.1) and
  // honours their weights. Idle streams made by PRIORITY are bounded by
  // nghttp2; clients that announce RFC 9218 get its urgencies only.
  nghttp2_option_set_server_fallback_rfc7540_priorities(o.opt, 1);
  // Left on (not set): nghttp2's RFC 9113 8.2.1 check that a field value
  // neither starts nor ends with whitespace (a malformed request).
  // The abuse limits below are nghttp2's defaults, stated.
  nghttp2_option_set_max_settings(o.opt, kMaxSettingsEntries);
  nghttp2_option_set_max_outbound_ack(o.opt, kMaxOutboundAcks);
  nghttp2_option_set_stream_reset_rate_limit(o.opt, kResetBurst, kResetRate);
  nghttp2_option_set_max_continuations(o.opt, kMaxContinuations);
  if (nghttp2_session_server_new3(&ng_, c.cbs, this, o.opt, memory_.mem()) != 0) return false;

  const nghttp2_settings_entry iv[] = {
      {kPrivateMaxStreams, max_streams_},  // sent as SETTINGS_MAX_CONCURRENT_STREAMS
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, uint32_t(body_window_)},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, uint32_t(std::min<size_t>(list_limit_, 0xffffffff))},
      // RFC 9218: no RFC 7540 priority tree to keep per connection.
      {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
  };
  if (nghttp2_submit_settings(ng_, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0]) != 0) return false;
  nghttp2_session_set_local_window_size(ng_, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
  return true;
}

Stream* Session::find(int32_t id) {
  // nghttp2 keeps its streams in a hash map: our Stream rides along as the
  // stream's user data, set when it opens and gone when nghttp2 closes it.
  return static_cast<Stream*>(nghttp2_session_get_stream_user_data(ng_, id));
}

bool Session::receive(const char* data, size_t len) {
  if (abuse_reason_) return false;
  size_t fed = 0, pos = 0;
  while (pos < len) {
    size_t used = 0;
    FrameHeader h;
    if (!scanner_.next(data + pos, len - pos, used, h)) break;
    pos += used;
    if (!note_frame(h)) {
      if (abuse_reason_) return false;
      continue;
    }
    // nghttp2 first takes everything before the header's last byte, so
    // the frames ahead of this one have all had their effect.
    if (!feed(data + fed, pos - 1 - fed)) return false;
    fed = pos - 1;
    if (!check_frame(h)) return false;
  }
  if (!feed(data + fed, len - fed)) return false;
  run_ready();
  service();
  return true;
}

bool Session::feed(const char* data, size_t len) {
  if (len == 0) return true;
  in_callback_ = true;
  ssize_t n = nghttp2_session_mem_recv(ng_, reinterpret_cast<const uint8_t*>(data), len);
  in_callback_ = false;
  if (n < 0) {
    if (n == NGHTTP2_ERR_FLOODED) {
      abuse("too many frames queued (flood)");
    } else if (n == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS) {
      abuse("too many CONTINUATION frames");
    } else {
      TORII_LOG(info, "client sent invalid HTTP/2 data (%s), client: %s", nghttp2_strerror(int(n)),
                info_.remote_addr.c_str());
      nghttp2_session_terminate_session(ng_, NGHTTP2_PROTOCOL_ERROR);
    }
    return false;
  }
  if (abuse_reason_) return false;
  // nghttp2 found a connection error of its own (it queued the GOAWAY),
  // or the client's GOAWAY left nothing to wait for.
  return nghttp2_session_want_read(ng_) != 0;
}

bool Session::note_frame(const FrameHeader& h) {
  const bool client_stream = h.stream_id > 0 && (h.stream_id & 1);
  switch (h.type) {
    case NGHTTP2_HEADERS:
      if (client_stream && h.stream_id > ledger_.last()) {
        ledger_.opened(h.stream_id);
        return false;
      }
      return client_stream;
    case NGHTTP2_DATA:
      return client_stream && h.stream_id <= ledger_.last();
    case NGHTTP2_PRIORITY:
      // Counted here: nghttp2 skips them unseen for RFC 9218 clients.
      if (!flood_.count(FloodGuard::Kind::control, host_.now_ms())) {
        abuse(flood_.reason());
        return false;
      }
      return h.stream_id == 0;
    default:
      return false;
  }
}

bool Session::check_frame(const FrameHeader& h) {
  const int32_t id = h.stream_id;
  const char* what = h.type == NGHTTP2_DATA ? "DATA" : h.type == NGHTTP2_HEADERS ? "HEADERS" : "PRIORITY";
  if (h.type == NGHTTP2_PRIORITY) return connection_error(NGHTTP2_PROTOCOL_ERROR, what, id);
  if (nghttp2_stream* s = nghttp2_session_find_stream(ng_, id)) {
    const auto st = nghttp2_stream_get_state(s);
    // DATA after the client's END_STREAM, on a stream still open our way:
    // nghttp2 would end the connection too, but unseen, and the requests
    // of this read would still start.
    if (st == NGHTTP2_STREAM_STATE_HALF_CLOSED_REMOTE && h.type == NGHTTP2_DATA)
      return connection_error(NGHTTP2_STREAM_CLOSED, what, id);
    if (st != NGHTTP2_STREAM_STATE_IDLE && st != NGHTTP2_STREAM_STATE_CLOSED) return true;  // nghttp2's rules
  }
  switch (ledger_.state(id)) {
    case StreamLedger::State::closed_after_end:
      // RFC 9113 5.1: anything after the client's END_STREAM.
      return connection_error(NGHTTP2_STREAM_CLOSED, what, id);
    case StreamLedger::State::reset_by_client:
      stream_error(NGHTTP2_STREAM_CLOSED, what, id);
      return !abuse_reason_;
    case StreamLedger::State::skipped:
      // 5.1.1: a new stream must have a higher identifier than the last;
      // DATA for a stream that never opened is for a closed one (6.1).
      if (h.type == NGHTTP2_HEADERS) return connection_error(NGHTTP2_PROTOCOL_ERROR, what, id);
      stream_error(NGHTTP2_STREAM_CLOSED, what, id);
      return !abuse_reason_;
    case StreamLedger::State::reset_by_us:  // in flight when we reset it: ignored (5.1)
    case StreamLedger::State::open:         // nghttp2 ignored its HEADERS (after our GOAWAY)
    case StreamLedger::State::client_ended:
    case StreamLedger::State::unknown:      // too old to tell: ignored
      return true;
  }
  return true;
}

bool Session::connection_error(uint32_t code, const char* what, int32_t id) {
  TORII_LOG(info, "client sent %s frame for %s stream %d, the last was %d, client: %s", what,
            code == NGHTTP2_STREAM_CLOSED ? "closed" : "invalid", int(id), int(ledger_.last()),
            info_.remote_addr.c_str());
  going_away_ = true;
  nghttp2_session_terminate_session(ng_, code);
  return false;
}

void Session::stream_error(uint32_t code, const char* what, int32_t id) {
  TORII_LOG(info, "client sent %s frame for closed stream %d, client: %s", what, int(id), info_.remote_addr.c_str());
  nghttp2_submit_rst_stream(ng_, NGHTTP2_FLAG_NONE, id, code);
  // Each costs us a frame: bounded like the other control frames.
  if (!flood_.count(FloodGuard::Kind::control, host_.now_ms())) abuse(flood_.reason());
}

void Session::run_ready() {
  ready_.run([this](int32_t id) {
    Stream* s = find(id);
    if (!s || s->closed() || s->started()) return;
    if (goaway_last_id_ >= 0 && id > goaway_last_id_) {
      // Arrived with (or after) the request that ended the connection.
      nghttp2_submit_rst_stream(ng_, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
      return;
    }
    ++requests_;
    info_.requests = requests_;
    s->run();
    const bool too_old = host_.now_ms() - info_.start_ms > keepalive_time_ms_;
    if ((requests_ >= max_requests_ || too_old) && !going_away_) {
      // keepalive_requests, keepalive_time: this connection takes no new streams.
      going_away_ = true;
      goaway_last_id_ = id;
      nghttp2_submit_goaway(ng_, NGHTTP2_FLAG_NONE, id, NGHTTP2_NO_ERROR, nullptr, 0);
    }
  });
}

bool Session::service() {
  bool ran = false;
  deliver_.run([&](int32_t id) {
    if (Stream* s = find(id)) {
      s->deliver_body();
      ran = true;
    }
  });
  drained_.run([&](int32_t id) {
    Stream* s = find(id);
    if (s && s->drain_due()) {
      s->fire_drain();
      ran = true;
    }
  });
  return ran;
}

void Session::submit_pending() {
  submit_.run([this](int32_t id) {
    Stream* s = find(id);
    if (s && !s->closed() && s->head_ready()) s->submit();
  });
}

bool Session::produce(std::string& out, size_t limit) {
  submit_pending();
  out_ = &out;
  limit_ = limit;
  bool ok = true;
  while (out.size() < limit) {
    const uint8_t* p = nullptr;
    ssize_t n = nghttp2_session_mem_send(ng_, &p);
    if (n < 0) {
      TORII_LOG(info, "HTTP/2 send failed (%s), client: %s", nghttp2_strerror(int(n)), info_.remote_addr.c_str());
      ok = false;
      break;
    }
    if (n == 0) break;  // nothing left, or a no-copy frame filled the buffer
    const size_t mark = out.size();
    out.append(reinterpret_cast<const char*>(p), size_t(n));
    if (!max_streams_unmasked_) max_streams_unmasked_ = unmask_max_streams(out.data() + mark, size_t(n));
  }
  out_ = nullptr;
  if (resets_waiting_) {
    // A 408 for a silent body went out whole: now the reset, in the next batch.
    resets_waiting_ = false;
    for (const auto& s : streams_) {
      if (s->reset_due()) s->reset_now();
      else if (s->reset_waiting()) resets_waiting_ = true;
    }
  }
  return ok;
}

bool Session::unmask_max_streams(char* p, size_t n) {
  // Our SETTINGS is the first frame we send, and whole in one piece.
  while (n >= kFrameHeaderSize) {
    const size_t len = read_be(p, 3);
    if (kFrameHeaderSize + len > n) return false;
    const bool ours = uint8_t(p[3]) == NGHTTP2_SETTINGS && !(p[4] & NGHTTP2_FLAG_ACK) &&
                      (read_be(p + 5, 4) & 0x7fffffff) == 0;
    if (ours) {
      for (size_t at = kFrameHeaderSize; at + kSettingsEntrySize <= kFrameHeaderSize + len;
           at += kSettingsEntrySize) {
        if (read_be(p + at, 2) != kPrivateMaxStreams) continue;
        p[at] = char(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS >> 8);
        p[at + 1] = char(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS & 0xff);
      }
      return true;
    }
    p += kFrameHeaderSize + len;
    n -= kFrameHeaderSize + len;
  }
  return false;
}

bool Session::refuse_excess_stream(int32_t id) {
  if (streams_.size() < max_streams_) return false;
  // RFC 9113 5.1.2: the excess stream is refused; the connection and its
  // other streams go on.
  TORII_LOG(info, "client exceeded http2_max_concurrent_streams, client: %s", info_.remote_addr.c_str());
  nghttp2_submit_rst_stream(ng_, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
  // Our refusal is not the client's reset. Before the client has our
  // SETTINGS it may open any number (5.1.2); after, it knows better.
  if (settings_acked_ && !flood_.count(FloodGuard::Kind::refused, host_.now_ms())) abuse(flood_.reason());
  return true;
}

void Session::shutdown() {
  if (going_away_) return;
  going_away_ = true;
  goaway_last_id_ = nghttp2_session_get_last_proc_stream_id(ng_);
  nghttp2_submit_goaway(ng_, NGHTTP2_FLAG_NONE, goaway_last_id_, NGHTTP2_NO_ERROR, nullptr, 0);
}

void Session::terminate(uint32_t error_code) {
  going_away_ = true;
  nghttp2_session_terminate_session(ng_, error_code);
}

bool Session::want_read() const { return nghttp2_session_want_read(ng_) != 0; }
bool Session::want_write() const { return nghttp2_session_want_write(ng_) != 0 || !submit_.empty(); }

bool Session::stalled() const {
  for (const auto& s : streams_)
    if (s->blocked_by_window()) return true;
  return false;
}

int64_t Session::body_deadline() const {
  int64_t due = INT64_MAX;
  for (const auto& s : streams_) due = std::min(due, s->body_deadline());
  return due;
}

void Session::expire_bodies(int64_t now_ms) {
  // Collected first: a 408 may change streams_ (nghttp2 runs no callback
  // here, but the handler's teardown might).
  std::vector<int32_t> due;
  for (const auto& s : streams_)
    if (s->body_deadline() <= now_ms) due.push_back(s->id());
  for (int32_t id : due) {
    if (Stream* s = find(id)) {
      s->body_timed_out();
      if (s->reset_waiting()) resets_waiting_ = true;  // produce() sends it after the 408
    }
  }
}

void Session::abort_streams() {
  for (auto& s : streams_) {
    if (!s->closed()) s->on_close(NGHTTP2_CANCEL);
  }
}

void Session::collect_closed() { graveyard_.clear(); }

bool Session::shed_idle_memory() {
  if (!ng_ || in_callback_ || !streams_.empty() || nghttp2_session_want_write(ng_)) return false;
  memory_.release_idle_pages();
  return true;
}

void Session::abuse(const char* reason) {
  if (abuse_reason_) return;
  abuse_reason_ = reason;
  TORII_LOG(info, "client misbehaved over HTTP/2 (%s), closing connection, client: %s", reason,
            info_.remote_addr.c_str());
  going_away_ = true;
  nghttp2_session_terminate_session(ng_, NGHTTP2_ENHANCE_YOUR_CALM);
}

bool Session::count_reset() {
  if (flood_.count(FloodGuard::Kind::reset, host_.now_ms())) return true;
  abuse(flood_.reason());
  return false;
}

void Session::stream_output_changed(Stream& s) {
  if (s.head_ready()) submit_.push(s.id());
  host_.wake();
}

void Session::stream_wants_delivery(Stream& s) {
  deliver_.push(s.id());
  host_.wake();
}

void Session::stream_drain_due(Stream& s) {
  drained_.push(s.id());
  host_.wake();
}

// ---- nghttp2 callbacks ----------------------------------------------------------

int Session::on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* self = static_cast<Session*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  const int32_t id = frame->hd.stream_id;
  // No Stream: its fields, DATA and close find nothing and are dropped.
  if (self->refuse_excess_stream(id)) return 0;
  auto stream = std::make_unique<Stream>(*self, id);
  nghttp2_session_set_stream_user_data(self->ng_, id, stream.get());
  self->streams_.push_back(std::move(stream));
  return 0;
}

int Session::on_header(nghttp2_session*, const nghttp2_frame* frame, nghttp2_rcbuf* name, nghttp2_rcbuf* value,
                       uint8_t, void* user) {
  auto* self = static_cast<Session*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  // Trailer fields (a second HEADERS) are read and dropped, as nginx does.
  if (frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  Stream* s = self->find(frame->hd.stream_id);
  if (s) s->add_field(name, value, self->field_limit_, self->list_limit_);
  return 0;
}

int Session::on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* self = static_cast<Session*>(user);
  const int64_t now = self->host_.now_ms();
  switch (frame->hd.type) {
    case NGHTTP2_HEADERS: {
      const bool end = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
      if (end) self->ledger_.client_ended(frame->hd.stream_id);
      Stream* s = self->find(frame->hd.stream_id);
      if (!s) return 0;
      if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        s->headers_done(end);
        self->ready_.push(s->id());
      } else if (end) {
        s->on_remote_end();
        self->deliver_.push(s->id());
      }
      return 0;
    }
    case NGHTTP2_DATA: {
      const bool end = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
      if (frame->hd.length == 0 && !end && !self->flood_.count(FloodGuard::Kind::empty_data, now)) {
        self->abuse(self->flood_.reason());
        return 0;
      }
      if (!end) return 0;
      self->ledger_.client_ended(frame->hd.stream_id);
      if (Stream* s = self->find(frame->hd.stream_id)) {
        s->on_remote_end();
        self->deliver_.push(s->id());
      }
      return 0;
    }
    case NGHTTP2_RST_STREAM:
      self->ledger_.client_reset(frame->hd.stream_id);
      return 0;
    case NGHTTP2_SETTINGS:
      // We send one SETTINGS: its ACK means the client applied our limits.
      if (frame->hd.flags & NGHTTP2_FLAG_ACK) {
        self->settings_acked_ = true;
        return 0;
      }
      [[fallthrough]];
    case NGHTTP2_PING:
      if (frame->hd.flags & NGHTTP2_FLAG_ACK) return 0;
      // PRIORITY frames are counted as they arrive (note_frame).
      if (!self->flood_.count(FloodGuard::Kind::control, now)) self->abuse(self->flood_.reason());
      return 0;
    default:
      return 0;
  }
}

int Session::on_data_chunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data, size_t len,
                           void* user) {
  auto* self = static_cast<Session*>(user);
  Stream* s = self->find(stream_id);
  if (!s) {
    // A stream we no longer track: give the connection window back.
    nghttp2_session_consume_connection(self->ng_, len);
    return 0;
  }
  s->on_data(data, len);
  self->deliver_.push(stream_id);
  return 0;
}

int Session::on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user) {
  auto* self = static_cast<Session*>(user);
  self->ledger_.closed(stream_id);
  auto it = std::find_if(self->streams_.begin(), self->streams_.end(),
                         [stream_id](const std::unique_ptr<Stream>& s) { return s->id() == stream_id; });
  if (it == self->streams_.end()) return 0;
  Stream& s = **it;
  // A stream that ends before its response did (the client's RST_STREAM,
  // or ours for a malformed request) is what rapid reset is made of.
  if (!s.response_complete() || error_code != NGHTTP2_NO_ERROR) self->count_reset();
  s.on_close(error_code);
  self->graveyard_.push_back(std::move(*it));
  *it = std::move(self->streams_.back());  // order does not matter
  self->streams_.pop_back();
  return 0;
}

int Session::on_frame_not_send(nghttp2_session*, const nghttp2_frame* frame, int lib_error, void* user) {
  auto* self = static_cast<Session*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  // A stream nghttp2 already closed (its own RST_STREAM went first, e.g.
  // for a flow-control error): nothing to end.
  if (lib_error == NGHTTP2_ERR_STREAM_CLOSED || lib_error == NGHTTP2_ERR_STREAM_CLOSING ||
      !nghttp2_session_find_stream(self->ng_, frame->hd.stream_id))
    return 0;
  // A response head that was refused: nothing else will go out, so end the stream.
  nghttp2_submit_rst_stream(self->ng_, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_INTERNAL_ERROR);
  return 0;
}

int Session::send_data(nghttp2_session*, nghttp2_frame* frame, const uint8_t* framehd, size_t length,
                       nghttp2_data_source* source, void* user) {
  auto* self = static_cast<Session*>(user);
  std::string& out = *self->out_;
  if (out.size() >= self->limit_) return NGHTTP2_ERR_WOULDBLOCK;  // the next produce() takes it
  auto* s = static_cast<Stream*>(source->ptr);
  const size_t mark = out.size();
  out.append(reinterpret_cast<const char*>(framehd), 9);
  const size_t padlen = frame->data.padlen;  // counts the Pad Length byte itself
  if (padlen > 0) out.push_back(char(padlen - 1));
  if (!s->write_data(out, length)) {
    out.resize(mark);
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // nghttp2 resets the stream
  }
  if (padlen > 1) out.append(padlen - 1, '\0');
  if (s->drain_due()) self->drained_.push(s->id());
  // Stop once the batch is full: mem_send would otherwise frame every
  // stream's window into this one buffer.
  return out.size() >= self->limit_ ? NGHTTP2_ERR_PAUSE : 0;
}

}  // namespace torii::http2
