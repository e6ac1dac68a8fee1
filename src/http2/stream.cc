#include "http2/stream.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>

#include "core/clock.h"
#include "core/worker.h"
#include "http/pipeline.h"
#include "http/stream_request.h"
#include "http1/parser.h"
#include "http2/response_fields.h"
#include "http2/session.h"
#include "log/error_log.h"

namespace torii::http2 {

namespace {

constexpr size_t kDrainLowMark = 16 * 1024;  // a streaming handler resumes below this
constexpr size_t kMinBodyWindow = 64 * 1024;
constexpr size_t kCompactAfter = 32;  // spent piece slots kept before the vector is compacted

std::string_view view(nghttp2_rcbuf* b) {
  nghttp2_vec v = nghttp2_rcbuf_get_buf(b);
  return {reinterpret_cast<const char*>(v.base), v.len};
}

nghttp2_nv make_nv(std::string_view name, std::string_view value) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
                    NGHTTP2_NV_FLAG_NONE};
}

ssize_t read_source(nghttp2_session*, int32_t, uint8_t*, size_t length, uint32_t* flags, nghttp2_data_source* source,
                    void*) {
  return static_cast<Stream*>(source->ptr)->read_length(length, flags);
}

}  // namespace

Stream::Stream(Session& session, int32_t id) : session_(session), id_(id) {}

Stream::~Stream() {
  for (auto* b : rcbufs_) nghttp2_rcbuf_decref(b);
}

// ---- request -------------------------------------------------------------------

void Stream::add_field(nghttp2_rcbuf* name, nghttp2_rcbuf* value, size_t field_limit, size_t list_limit) {
  // Room for a typical request's buffers (values, and the names of its
  // regular fields): one allocation, not one per doubling.
  if (rcbufs_.capacity() == 0) rcbufs_.reserve(24);
  switch (head_fields_.add(view(name), view(value), field_limit, list_limit)) {
    case http::FieldSection::Keep::nothing:
      return;
    case http::FieldSection::Keep::name_and_value:
      nghttp2_rcbuf_incref(name);
      rcbufs_.push_back(name);
      [[fallthrough]];
    case http::FieldSection::Keep::value:
      nghttp2_rcbuf_incref(value);
      rcbufs_.push_back(value);
      return;
  }
}

void Stream::run() {
  const auto& binding = session_.binding();
  exchange_.emplace(*this, session_.info(), session_.host().services());
  http::Exchange& ex = *exchange_;
  if (http::prepare_stream_request(ex, binding->config, *binding->group, head_fields_, 20, request_body_.had_body()))
    session_.host().run_request(ex);
  if (ex.close_connection && !ex.head_sent() && !closed_) {
    // return 444: no response at all, the stream is reset.
    nghttp2_submit_rst_stream(session_.ng(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_INTERNAL_ERROR);
    session_.host().wake();
  }
  if (request_body_.deliverable()) session_.stream_wants_delivery(*this);
}

void Stream::on_data(const uint8_t* data, size_t len) {
  request_body_.on_data({reinterpret_cast<const char*>(data), len}, session_.host().now_ms(),
                        exchange_ ? &*exchange_ : nullptr);
}

void Stream::acknowledge_body(size_t n) {
  if (closed_) {
    nghttp2_session_consume_connection(session_.ng(), n);
  } else {
    nghttp2_session_consume(session_.ng(), id_, n);
  }
}

void Stream::cancel_stream() {
  nghttp2_submit_rst_stream(session_.ng(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_CANCEL);
  session_.host().wake();
}

void Stream::deliver_body() {
  if (closed_ || !exchange_) return;
  request_body_.deliver(*exchange_, session_.info().remote_addr.c_str());
}

void Stream::read_body(http::BodyReader* reader) {
  if (!request_body_.start_reading(reader, session_.host().now_ms())) return;
  if (!closed_ && !request_body_.remote_closed()) {
    // Reading starts: let the client send more than the preread window.
    const size_t want = std::max({session_.body_window(), exchange_->settings().client_body_buffer_size,
                                  kMinBodyWindow});
    if (want > session_.body_window())
      nghttp2_session_set_local_window_size(session_.ng(), NGHTTP2_FLAG_NONE, id_, int32_t(std::min<size_t>(want, 0x7fffffff)));
  }
  session_.stream_wants_delivery(*this);
}

void Stream::resume_body() {
  if (request_body_.resume(session_.host().now_ms())) session_.stream_wants_delivery(*this);
}

int64_t Stream::body_deadline() const {
  if (closed_ || !exchange_) return INT64_MAX;
  return request_body_.deadline(*exchange_);
}

void Stream::body_timed_out() {
  http::Exchange& ex = *exchange_;
  ex.log_body_timeout();
  request_body_.drop();
  if (!ex.head_sent()) {
    reset_after_response_ = true;
    http::send_error(ex, 408);
  } else {
    nghttp2_submit_rst_stream(session_.ng(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_CANCEL);
  }
  session_.host().wake();
}

void Stream::reset_now() {
  reset_after_response_ = false;
  nghttp2_submit_rst_stream(session_.ng(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_NO_ERROR);
}

void Stream::on_close(uint32_t error_code) {
  if (closed_) return;
  closed_ = true;
  // Body bytes never acknowledged still count against the connection.
  if (const size_t unread = request_body_.close()) nghttp2_session_consume_connection(session_.ng(), unread);
  drain_cb_ = nullptr;
  clear_pieces();
  queued_total_ = 0;
  queued_memory_ = 0;
  if (!exchange_) return;
  http::Exchange& ex = *exchange_;
  // Reset or cut off before the response ended: 499 if nothing was sent,
  // and the handler lets go of its upstream (noting the try for the log).
  if (!eof_sent_) ex.client_gone();
  session_.host().log_request(ex);
  (void)error_code;
}

// ---- response -------------------------------------------------------------------

void Stream::send_head(const http::ResponseHead& head) {
  if (closed_) return;
  head_ = &head;
  exchange_->header_bytes = 0;
  session_.stream_output_changed(*this);
}

void Stream::send_interim(const http::ResponseHead& head) {
  if (closed_ || head_ || submitted_) return;
  std::vector<nghttp2_nv> nva;
  nva.reserve(head.headers.size() + 1);
  nva.push_back(make_nv(":status", "103"));
  for (const auto& [name, value] : head.headers)
    if (!dropped_in_h2(name) && safe_name(name) && safe_value(value)) nva.push_back(make_nv(name, value));
  // A non-final response: no END_STREAM, the final HEADERS follow (nghttp2 copies the fields).
  if (nghttp2_submit_headers(session_.ng(), NGHTTP2_FLAG_NONE, id_, nullptr, nva.data(), nva.size(), nullptr) >= 0)
    session_.host().wake();
}

void Stream::send_body(std::string_view data) {
  if (closed_ || data.empty()) return;
  if (has_pieces() && !pieces_.back().file) {
    pieces_.back().data.append(data);
  } else {
    Piece p;
    p.data.assign(data);
    push_piece(std::move(p));
  }
  queued_total_ += int64_t(data.size());
  queued_memory_ += data.size();
  output_changed();
}

void Stream::send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) {
  if (closed_ || length <= 0) return;
  Piece p;
  p.file = std::move(file);
  p.offset = offset;
  p.length = length;
  push_piece(std::move(p));
  queued_total_ += length;
  output_changed();
}

void Stream::finish() {
  if (closed_) return;
  finished_ = true;
  if (!head_) {
    // Finished with no response: nothing can be sent on this stream.
    nghttp2_submit_rst_stream(session_.ng(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_INTERNAL_ERROR);
    session_.host().wake();
    return;
  }
  output_changed();
  if (request_body_.unread()) session_.stream_wants_delivery(*this);
}

void Stream::output_changed() {
  if (submitted_ && deferred_) {
    deferred_ = false;
    nghttp2_session_resume_data(session_.ng(), id_);
  }
  session_.stream_output_changed(*this);
}

void Stream::set_drain_callback(std::function<void()> cb) {
  drain_cb_ = std::move(cb);
  if (drain_due()) session_.stream_drain_due(*this);
}

bool Stream::drain_due() const { return drain_cb_ && !closed_ && queued_memory_ <= kDrainLowMark; }

void Stream::fire_drain() {
  auto cb = std::move(drain_cb_);
  drain_cb_ = nullptr;
  cb();
}

int Stream::submit() {
  const http::ResponseHead& head = *head_;
  const http::Exchange& ex = *exchange_;
  const int status = head.status >= 100 && head.status <= 999 ? head.status : 500;
  char status_text[4] = {char('0' + status / 100), char('0' + status / 10 % 10), char('0' + status % 10), 0};
  char length_text[24];
  // The field list lives on the stack for a usual head (nghttp2 copies it).
  constexpr size_t kInlineFields = 24;
  nghttp2_nv inline_nva[kInlineFields];
  std::vector<nghttp2_nv> heap_nva;
  nghttp2_nv* nva = inline_nva;
  if (head.headers.size() + 2 > kInlineFields) {
    heap_nva.resize(head.headers.size() + 2);
    nva = heap_nva.data();
  }
  size_t count = 0;
  nva[count++] = make_nv(":status", std::string_view(status_text, 3));
  int64_t header_bytes = 10;
  for (const auto& [name, value] : head.headers) {
    if (dropped_in_h2(name) || !safe_name(name) || !safe_value(value)) continue;
    nva[count++] = make_nv(name, value);  // nghttp2 copies and lower-cases the name
    header_bytes += int64_t(name.size() + value.size() + 2);
  }
  const bool no_body = status == 204 || status == 304 || status < 200;
  if (head.content_length >= 0 && !no_body) {
    const size_t n = size_t(std::to_chars(length_text, length_text + sizeof length_text, head.content_length).ptr -
                            length_text);
    nva[count++] = make_nv("content-length", std::string_view(length_text, n));
    header_bytes += int64_t(n + 16);
  }
  exchange_->header_bytes = header_bytes;
  submitted_ = true;
  const bool body = !ex.header_only && !no_body && (queued_total_ > 0 || !finished_ || !trailers_.empty());
  int rv;
  if (body) {
    nghttp2_data_provider prd;
    prd.source.ptr = this;
    prd.read_callback = &read_source;
    rv = nghttp2_submit_response(session_.ng(), id_, nva, count, &prd);
  } else {
    eof_sent_ = true;
    clear_pieces();
    queued_total_ = 0;
    queued_memory_ = 0;
    rv = nghttp2_submit_response(session_.ng(), id_, nva, count, nullptr);
  }
  if (rv != 0) {
    TORII_LOG(info, "could not submit HTTP/2 response (%s), client: %s", nghttp2_strerror(rv),
              session_.info().remote_addr.c_str());
    nghttp2_submit_rst_stream(session_.ng(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_INTERNAL_ERROR);
  }
  return rv;
}

void Stream::push_piece(Piece p) {
  if (first_piece_ > 0 && first_piece_ * 2 >= pieces_.size()) {
    pieces_.erase(pieces_.begin(), pieces_.begin() + ptrdiff_t(first_piece_));  // drop the sent ones
    first_piece_ = 0;
  }
  pieces_.push_back(std::move(p));
}

void Stream::pop_piece() {
  pieces_[first_piece_] = Piece();  // lets go of the file or the memory now
  if (++first_piece_ == pieces_.size()) {
    clear_pieces();
  } else if (first_piece_ >= kCompactAfter && first_piece_ * 2 >= pieces_.size()) {
    // A stream whose queue never empties: drop the spent slots (amortised O(1)).
    pieces_.erase(pieces_.begin(), pieces_.begin() + ptrdiff_t(first_piece_));
    first_piece_ = 0;
  }
}

void Stream::clear_pieces() {
  pieces_.clear();
  first_piece_ = 0;
}

ssize_t Stream::read_length(size_t max, uint32_t* flags) {
  if (queued_total_ == 0) {
    if (finished_) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      eof_sent_ = true;
      submit_trailers(flags);
      return 0;
    }
    deferred_ = true;  // send_body/finish resume us
    return NGHTTP2_ERR_DEFERRED;
  }
  const size_t n = size_t(std::min<int64_t>(int64_t(std::min(max, session_.chunk_size())), queued_total_));
  *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
  if (finished_ && int64_t(n) == queued_total_) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    eof_sent_ = true;
    submit_trailers(flags);
  }
  return ssize_t(n);
}

// The last DATA frame leaves END_STREAM to a HEADERS frame of trailers.
void Stream::submit_trailers(uint32_t* flags) {
  if (trailers_.empty()) return;
  std::vector<nghttp2_nv> nva;
  nva.reserve(trailers_.size());
  for (const auto& [name, value] : trailers_) {
    if (!safe_name(name) || !safe_value(value)) continue;
    nva.push_back(make_nv(name, value));
  }
  if (nghttp2_submit_trailer(session_.ng(), id_, nva.data(), nva.size()) == 0) *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
  trailers_.clear();
}

// File bytes straight from the page cache into the output buffer.
bool Stream::pread_into(std::string& out, const Piece& p, size_t k) {
  const size_t base = out.size();
  out.resize(base + k);
  if (http::read_exact(p.file->fd, out.data() + base, k, p.offset)) return true;
  TORII_LOG(crit, "pread() failed (%d: %s) while sending a file over HTTP/2", errno, strerror(errno));
  return false;
}

bool Stream::write_data(std::string& out, size_t len) {
  queued_total_ -= int64_t(len);
  if (exchange_) exchange_->body_bytes_sent += int64_t(len);  // framed for the client: $body_bytes_sent
  while (len > 0 && has_pieces()) {
    Piece& p = front_piece();
    if (!p.file) {
      const size_t k = std::min(len, p.data.size() - p.consumed);
      out.append(p.data, p.consumed, k);
      p.consumed += k;
      queued_memory_ -= k;
      len -= k;
      if (p.consumed == p.data.size()) pop_piece();
      continue;
    }
    const size_t k = size_t(std::min<int64_t>(int64_t(len), p.length));
    if (p.file->has_content()) {
      out.append(p.file->content.data() + p.offset, k);  // the open-file cache holds the bytes
    } else if (!pread_into(out, p, k)) {
      clear_pieces();
      return false;
    }
    p.offset += int64_t(k);
    p.length -= int64_t(k);
    len -= k;
    if (p.length == 0) pop_piece();
  }
  return len == 0;
}

}  // namespace torii::http2
