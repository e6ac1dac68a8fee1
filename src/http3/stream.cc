#include "http3/stream.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "core/ascii.h"
#include "core/clock.h"
#include "core/worker.h"
#include "http/pipeline.h"
#include "http/stream_request.h"
#include "http1/parser.h"
#include "http3/session.h"
#include "log/error_log.h"

namespace torii::http3 {

namespace {

constexpr size_t kDrainLowMark = 16 * 1024;  // a streaming handler resumes below this
constexpr size_t kFileChunk = 16 * 1024;     // file bytes read per buffer handed to nghttp3
constexpr size_t kMaxSpare = 4;

// HTTP/3 error codes (RFC 9114 8.1).
constexpr uint64_t kH3RequestCancelled = 0x010c;
constexpr uint64_t kH3InternalError = 0x0102;

std::string_view view(nghttp3_rcbuf* b) {
  nghttp3_vec v = nghttp3_rcbuf_get_buf(b);
  return {reinterpret_cast<const char*>(v.base), v.len};
}

using core::iequals;

// Connection-specific fields HTTP/3 forbids (RFC 9114 4.2), and the framing we decide.
bool dropped_in_h3(std::string_view name) {
  return iequals(name, "connection") || iequals(name, "keep-alive") || iequals(name, "proxy-connection") ||
         iequals(name, "transfer-encoding") || iequals(name, "upgrade") || iequals(name, "content-length");
}

bool safe_name(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c <= ' ' || c >= 0x7f || c == ':') return false;
  return true;
}

bool safe_value(std::string_view s) {
  for (unsigned char c : s)
    if (c == '\r' || c == '\n' || c == '\0') return false;
  return true;
}

nghttp3_nv make_nv(std::string_view name, std::string_view value) {
  return nghttp3_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
                    NGHTTP3_NV_FLAG_NONE};
}

nghttp3_ssize read_source(nghttp3_conn*, int64_t, nghttp3_vec* vec, size_t veccnt, uint32_t* flags, void*,
                          void* stream_user_data) {
  return static_cast<Stream*>(stream_user_data)->read_data(vec, veccnt, flags);
}

}  // namespace

Stream::Stream(Session& session, int64_t id) : session_(session), id_(id) {}

Stream::~Stream() {
  for (auto* b : rcbufs_) nghttp3_rcbuf_decref(b);
}

// ---- request -------------------------------------------------------------------

void Stream::add_field(nghttp3_rcbuf* name, nghttp3_rcbuf* value, size_t field_limit, size_t list_limit) {
  switch (head_fields_.add(view(name), view(value), field_limit, list_limit)) {
    case http::FieldSection::Keep::nothing:
      return;
    case http::FieldSection::Keep::name_and_value:
      nghttp3_rcbuf_incref(name);
      rcbufs_.push_back(name);
      [[fallthrough]];
    case http::FieldSection::Keep::value:
      nghttp3_rcbuf_incref(value);
      rcbufs_.push_back(value);
      return;
  }
}

void Stream::run() {
  const auto& binding = session_.binding();
  exchange_.emplace(*this, session_.info(), session_.host().services());
  http::Exchange& ex = *exchange_;
  ex.early_data = early_data_;
  if (http::prepare_stream_request(ex, binding->config, *binding->group, head_fields_, 30, request_body_.had_body()))
    session_.host().run_request(ex);
  if (ex.close_connection && !ex.head_sent() && !closed_) reset(kH3RequestCancelled);  // return 444
  if (request_body_.deliverable()) session_.stream_wants_delivery(*this);
}

void Stream::on_data(const uint8_t* data, size_t len) {
  request_body_.on_data({reinterpret_cast<const char*>(data), len}, session_.host().now_ms(),
                        exchange_ ? &*exchange_ : nullptr);
}

// Body bytes go back to the client's flow-control window only when taken:
// a handler that stops reading closes the window.
void Stream::acknowledge_body(size_t n) { session_.consume(id_, n); }

void Stream::cancel_stream() { reset(kH3RequestCancelled); }

void Stream::deliver_body() {
  if (closed_ || !exchange_) return;
  request_body_.deliver(*exchange_, session_.info().remote_addr.c_str());
}

void Stream::read_body(http::BodyReader* reader) {
  if (request_body_.start_reading(reader, session_.host().now_ms())) session_.stream_wants_delivery(*this);
}

void Stream::resume_body() {
  if (request_body_.resume(session_.host().now_ms())) session_.stream_wants_delivery(*this);
}

int64_t Stream::body_deadline() const {
  if (closed_ || reset_ || !exchange_) return INT64_MAX;
  return request_body_.deadline(*exchange_);
}

void Stream::body_timed_out() {
  http::Exchange& ex = *exchange_;
  ex.log_body_timeout();
  request_body_.drop();
  if (ex.head_sent()) {
    reset(kH3RequestCancelled);
    return;
  }
  session_.stop_reading(id_);
  http::send_error(ex, 408);
  session_.host().wake();
}

int64_t Stream::send_deadline() const {
  if (!submitted_ || closed_ || reset_ || !exchange_ || queued_bytes() == 0) return INT64_MAX;
  return send_activity_ms_ + exchange_->settings().send_timeout.count();
}

void Stream::send_timed_out() {
  TORII_LOG(info, "client timed out (110: Connection timed out) while sending response to client, client: %s",
            session_.info().remote_addr.c_str());
  reset(kH3RequestCancelled);
}

void Stream::reset(uint64_t app_error) {
  if (closed_) return;
  reset_ = true;
  session_.reset_stream(id_, app_error);
  session_.host().wake();
}

void Stream::on_close() {
  if (closed_) return;
  closed_ = true;
  if (const size_t unread = request_body_.close()) acknowledge_body(unread);
  drain_cb_ = nullptr;
  pieces_.clear();
  first_piece_ = 0;
  inflight_.clear();
  inflight_bytes_ = 0;
  queued_total_ = 0;
  queued_memory_ = 0;
  if (!exchange_) return;
  http::Exchange& ex = *exchange_;
  // Reset or cut off before the response ended: 499 if nothing was sent,
  // and the handler lets go of its upstream (noting the try for the log),
  // as over HTTP/1.1 and HTTP/2.
  if (!eof_sent_) ex.client_gone();
  session_.host().log_request(ex);
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
  std::string names;  // lower-cased names (RFC 9114 4.2); nghttp3 copies the fields
  for (const auto& h : head.headers) names += h.first;
  for (auto& c : names)
    if (c >= 'A' && c <= 'Z') c = char(c + 32);
  std::vector<nghttp3_nv> nva;
  nva.reserve(head.headers.size() + 1);
  nva.push_back(make_nv(":status", "103"));
  size_t at = 0;
  for (const auto& [name, value] : head.headers) {
    const std::string_view lower = std::string_view(names).substr(at, name.size());
    at += name.size();
    if (!dropped_in_h3(name) && safe_name(name) && safe_value(value)) nva.push_back(make_nv(lower, value));
  }
  if (nghttp3_conn_submit_info(session_.h3(), id_, nva.data(), nva.size()) == 0) session_.host().wake();
}

void Stream::send_body(std::string_view data) {
  if (closed_ || data.empty()) return;
  if (queued_bytes() == 0) send_activity_ms_ = session_.host().now_ms();  // send_timeout starts now
  if (first_piece_ < pieces_.size() && !pieces_.back().file) {
    pieces_.back().data.append(data);
  } else {
    Piece p;
    p.data.assign(data);
    pieces_.push_back(std::move(p));
  }
  queued_total_ += int64_t(data.size());
  queued_memory_ += data.size();
  output_changed();
}

void Stream::send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) {
  if (closed_ || length <= 0) return;
  if (queued_bytes() == 0) send_activity_ms_ = session_.host().now_ms();  // send_timeout starts now
  Piece p;
  p.file = std::move(file);
  p.offset = offset;
  p.length = length;
  pieces_.push_back(std::move(p));
  queued_total_ += length;
  output_changed();
}

void Stream::finish() {
  if (closed_) return;
  finished_ = true;
  if (!head_) {
    reset(kH3InternalError);  // finished with no response: nothing can be sent
    return;
  }
  output_changed();
  if (request_body_.unread()) session_.stream_wants_delivery(*this);
}

// The upstream failed mid-body: the client must see the response cut, not complete.
void Stream::abort() {
  if (closed_) return;
  finished_ = true;
  reset(kH3InternalError);
}

void Stream::output_changed() {
  if (submitted_ && deferred_) {
    deferred_ = false;
    nghttp3_conn_resume_stream(session_.h3(), id_);
  }
  session_.stream_output_changed(*this);
}

void Stream::set_drain_callback(std::function<void()> cb) {
  drain_cb_ = std::move(cb);
  if (drain_due()) session_.stream_drain_due(*this);
}

bool Stream::drain_due() const { return drain_cb_ && !closed_ && queued_bytes() <= kDrainLowMark; }

void Stream::fire_drain() {
  auto cb = std::move(drain_cb_);
  drain_cb_ = nullptr;
  cb();
}

void Stream::submit() {
  const http::ResponseHead& head = *head_;
  const http::Exchange& ex = *exchange_;
  const int status = head.status >= 100 && head.status <= 999 ? head.status : 500;
  char status_text[4] = {char('0' + status / 100), char('0' + status / 10 % 10), char('0' + status % 10), 0};
  char length_text[24];
  // HTTP/3 field names are lower case (RFC 9114 4.2); nghttp3 copies the
  // list, so the lower-cased names live in one scratch string meanwhile,
  // and the list itself on the stack for a usual head.
  size_t names_size = 0;
  for (const auto& [name, value] : head.headers) names_size += name.size();
  std::string names(names_size, '\0');
  constexpr size_t kInlineFields = 24;
  nghttp3_nv inline_nva[kInlineFields];
  std::vector<nghttp3_nv> heap_nva;
  nghttp3_nv* nva = inline_nva;
  if (head.headers.size() + 2 > kInlineFields) {
    heap_nva.resize(head.headers.size() + 2);
    nva = heap_nva.data();
  }
  size_t count = 0;
  nva[count++] = make_nv(":status", std::string_view(status_text, 3));
  int64_t header_bytes = 10;
  size_t at = 0;
  for (const auto& [name, value] : head.headers) {
    if (dropped_in_h3(name) || !safe_name(name) || !safe_value(value)) continue;
    char* lower = names.data() + at;
    for (size_t k = 0; k < name.size(); ++k) lower[k] = core::ascii_lower(name[k]);
    nva[count++] = make_nv(std::string_view(lower, name.size()), value);
    at += name.size();
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
  send_activity_ms_ = session_.host().now_ms();
  const bool body = !ex.header_only && !no_body && (queued_total_ > 0 || !finished_);
  int rv;
  if (body) {
    nghttp3_data_reader dr{&read_source};
    rv = nghttp3_conn_submit_response(session_.h3(), id_, nva, count, &dr);
  } else {
    eof_sent_ = true;
    pieces_.clear();
    first_piece_ = 0;
    queued_total_ = 0;
    queued_memory_ = 0;
    rv = nghttp3_conn_submit_response(session_.h3(), id_, nva, count, nullptr);
  }
  if (rv != 0) {
    TORII_LOG(info, "could not submit HTTP/3 response (%s), client: %s", nghttp3_strerror(rv),
              session_.info().remote_addr.c_str());
    reset(kH3InternalError);
  }
}

std::string Stream::take_buffer() {
  if (spare_.empty()) return {};
  std::string b = std::move(spare_.back());
  spare_.pop_back();
  b.clear();
  return b;
}

// Only lower-case field names are well-formed in HTTP/3 (RFC 9114 4.2);
// a value may not break out of its field.
void Stream::submit_trailers(uint32_t* flags) {
  if (trailers_.empty()) return;
  std::vector<nghttp3_nv> nva;
  nva.reserve(trailers_.size());
  for (const auto& [name, value] : trailers_) {
    const bool name_ok = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
      return c > ' ' && c < 0x7f && c != ':' && !(c >= 'A' && c <= 'Z');
    });
    const bool value_ok = std::none_of(value.begin(), value.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
    if (name_ok && value_ok) nva.push_back(make_nv(name, value));
  }
  // nghttp3 copies the fields; the stream ends with them.
  if (!nva.empty() && nghttp3_conn_submit_trailers(session_.h3(), id_, nva.data(), nva.size()) == 0)
    *flags |= NGHTTP3_DATA_FLAG_NO_END_STREAM;
  trailers_.clear();
}

nghttp3_ssize Stream::read_data(nghttp3_vec* vec, size_t veccnt, uint32_t* flags) {
  size_t n = 0;
  // At most http3_stream_buffer_size unacknowledged per stream: the rest
  // waits in the pieces (and the handler waits on queued_bytes()).
  while (n < veccnt && first_piece_ < pieces_.size() && inflight_bytes_ < session_.stream_buffer_size()) {
    Piece& p = pieces_[first_piece_];
    // The entry goes into the deque first: a short string's bytes live
    // inside the string object, so pointers are taken where it will stay.
    InFlight& f = inflight_.emplace_back();
    if (!p.file) {
      f.data = std::move(p.data);  // the whole piece, as is: no copy
      f.ptr = f.data.data() + p.consumed;
      f.len = f.data.size() - p.consumed;
      queued_memory_ -= f.len;
      p = Piece();
      ++first_piece_;
    } else {
      const size_t k = size_t(std::min<int64_t>(int64_t(kFileChunk), p.length));
      if (p.file->has_content()) {
        f.file = p.file;  // the open-file cache holds the bytes
        f.ptr = p.file->content.data() + p.offset;
      } else {
        f.data = take_buffer();
        f.data.resize(k);
        if (!http::read_exact(p.file->fd, f.data.data(), k, p.offset)) {
          TORII_LOG(crit, "pread() failed (%d: %s) while sending a file over HTTP/3", errno, strerror(errno));
          inflight_.pop_back();
          return NGHTTP3_ERR_CALLBACK_FAILURE;  // nghttp3 resets the stream
        }
        f.ptr = f.data.data();
      }
      f.len = k;
      p.offset += int64_t(k);
      p.length -= int64_t(k);
      if (p.length == 0) {
        p = Piece();
        ++first_piece_;
      }
    }
    queued_total_ -= int64_t(f.len);
    inflight_bytes_ += f.len;
    if (exchange_) exchange_->body_bytes_sent += int64_t(f.len);  // framed for the client: $body_bytes_sent
    vec[n].base = reinterpret_cast<uint8_t*>(const_cast<char*>(f.ptr));
    vec[n].len = f.len;
    ++n;
  }
  if (first_piece_ == pieces_.size()) {
    pieces_.clear();
    first_piece_ = 0;
  }
  if (queued_total_ == 0 && finished_) {
    *flags |= NGHTTP3_DATA_FLAG_EOF;
    eof_sent_ = true;
    submit_trailers(flags);
    return nghttp3_ssize(n);
  }
  if (n == 0) {
    deferred_ = true;  // more output or an acknowledgement resumes us
    return NGHTTP3_ERR_WOULDBLOCK;
  }
  send_activity_ms_ = session_.host().now_ms();
  return nghttp3_ssize(n);
}

void Stream::on_acked(uint64_t n) {
  if (n > 0) send_activity_ms_ = session_.host().now_ms();
  inflight_bytes_ -= size_t(std::min<uint64_t>(n, inflight_bytes_));
  while (n > 0 && !inflight_.empty()) {
    InFlight& f = inflight_.front();
    const size_t k = size_t(std::min<uint64_t>(n, f.len - f.acked));
    f.acked += k;
    n -= k;
    if (f.acked < f.len) break;
    if (!f.data.empty() && f.data.capacity() >= kFileChunk && spare_.size() < kMaxSpare)
      spare_.push_back(std::move(f.data));  // reused for the next file chunk
    inflight_.pop_front();
  }
  if (deferred_ && first_piece_ < pieces_.size()) {
    deferred_ = false;
    nghttp3_conn_resume_stream(session_.h3(), id_);
    session_.host().wake();
  }
  if (drain_due()) session_.stream_drain_due(*this);
}

}  // namespace torii::http3
