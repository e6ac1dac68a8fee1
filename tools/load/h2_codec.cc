#include "load/h2_codec.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace torii::load {

namespace {

// Large windows, so flow control never paces the responses (as h2load's
// defaults): the connection window and every stream's start at 1 GiB.
constexpr int32_t kWindow = (1 << 30) - 1;

}  // namespace

H2Codec::H2Codec(const RequestTemplates& templates, unsigned streams, bool one_request, RequestSink& sink,
                 nghttp2_mem* mem)
    : templates_(templates), sink_(sink), streams_(streams ? streams : 1), one_request_(one_request), mem_(mem),
      slots_(streams_) {
  free_.reserve(streams_);
}

H2Codec::~H2Codec() { end_session(); }

const nghttp2_session_callbacks* H2Codec::callbacks() {
  static nghttp2_session_callbacks* cbs = [] {
    nghttp2_session_callbacks* c = nullptr;
    nghttp2_session_callbacks_new(&c);
    nghttp2_session_callbacks_set_send_callback(c, on_send);
    nghttp2_session_callbacks_set_on_header_callback(c, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(c, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(c, on_stream_close);
    return c;
  }();
  return cbs;
}

bool H2Codec::start() {
  end_session();
  if (nghttp2_session_client_new3(&session_, callbacks(), this, nullptr, mem_) != 0) {
    session_ = nullptr;
    return false;
  }
  free_.clear();
  for (uint32_t i = streams_; i-- > 0;) {
    slots_[i] = Slot{};
    free_.push_back(i);
  }
  active_ = 0;
  answered_ = 0;
  submitted_ = draining_ = failed_ = false;
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, uint32_t(kWindow)},
  };
  if (nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 2) != 0 ||
      nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kWindow) != 0) {
    end_session();
    return false;
  }
  return true;
}

void H2Codec::end_session() {
  // nghttp2_session_del calls no callbacks; the slots are reported by the caller.
  if (session_) nghttp2_session_del(session_);
  session_ = nullptr;
}

unsigned H2Codec::capacity() const {
  if (!session_ || failed_ || draining_ || (one_request_ && submitted_)) return 0;
  uint32_t limit = std::min<uint32_t>(
      streams_, nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS));
  return active_ < limit ? limit - active_ : 0;
}

void H2Codec::submit(int64_t from_ns, int64_t sent_ns) {
  uint32_t index = free_.back();
  free_.pop_back();
  Slot& slot = slots_[index];
  slot = Slot{from_ns, sent_ns, 0, 0, true};
  ++active_;
  submitted_ = true;
  const auto& nv = templates_.h2[next_url_];
  next_url_ = uint32_t((next_url_ + 1) % templates_.h2.size());
  nghttp2_data_provider body{};
  body.source.ptr = &slot;
  body.read_callback = read_body;
  int32_t id = nghttp2_submit_request(session_, nullptr, nv.data(), nv.size(),
                                      templates_.body.empty() ? nullptr : &body, &slot);
  if (id < 0) {
    // Stream ids used up (2^31 on one connection): finish the streams in
    // flight, then a new connection takes this request.
    draining_ = true;
    release(slot);
    if (id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE) {
      sink_.retry(from_ns);
    } else {
      sink_.failed(from_ns, ErrorKind::protocol, nghttp2_strerror(id));
    }
  }
}

size_t H2Codec::produce(char* out, size_t cap) {
  if (!session_ || failed_) return 0;
  out_ = out;
  out_cap_ = cap;
  out_len_ = 0;
  int rv = nghttp2_session_send(session_);
  out_ = nullptr;
  if (rv != 0) {
    fail_all(ErrorKind::protocol, nghttp2_strerror(rv));
    return 0;
  }
  return out_len_;
}

ssize_t H2Codec::on_send(nghttp2_session*, const uint8_t* data, size_t len, int, void* user) {
  auto* self = static_cast<H2Codec*>(user);
  size_t room = self->out_cap_ - self->out_len_;
  if (room == 0) return NGHTTP2_ERR_WOULDBLOCK;
  size_t n = std::min(room, len);
  std::memcpy(self->out_ + self->out_len_, data, n);
  self->out_len_ += n;
  return ssize_t(n);
}

bool H2Codec::receive(const char* data, size_t len) {
  if (!session_ || failed_) return false;
  ssize_t rv = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(data), len);
  if (rv < 0) {
    fail_all(ErrorKind::protocol, nghttp2_strerror(int(rv)));
    return false;
  }
  return true;
}

int H2Codec::on_header(nghttp2_session* session, const nghttp2_frame* frame, const uint8_t* name,
                       size_t namelen, const uint8_t* value, size_t valuelen, uint8_t, void*) {
  if (frame->hd.type != NGHTTP2_HEADERS || namelen != 7 || std::memcmp(name, ":status", 7) != 0)
    return 0;
  auto* slot = static_cast<Slot*>(nghttp2_session_get_stream_user_data(session, frame->hd.stream_id));
  if (!slot || valuelen != 3) return 0;
  int status = 0;
  for (size_t i = 0; i < 3; ++i) {
    if (value[i] < '0' || value[i] > '9') return 0;
    status = status * 10 + (value[i] - '0');
  }
  slot->status = status;
  return 0;
}

int H2Codec::on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  // Streams above the GOAWAY's last id are closed by nghttp2 with
  // REFUSED_STREAM; those below it finish.
  if (frame->hd.type == NGHTTP2_GOAWAY) static_cast<H2Codec*>(user)->draining_ = true;
  return 0;
}

int H2Codec::on_stream_close(nghttp2_session* session, int32_t stream_id, uint32_t error_code, void* user) {
  auto* self = static_cast<H2Codec*>(user);
  auto* slot = static_cast<Slot*>(nghttp2_session_get_stream_user_data(session, stream_id));
  if (!slot || !slot->used) return 0;
  int64_t from = slot->from_ns;
  int status = slot->status;
  self->release(*slot);
  if (error_code == NGHTTP2_NO_ERROR && status >= 200) {
    ++self->answered_;
    self->sink_.completed(from, status);
  } else if (error_code == NGHTTP2_REFUSED_STREAM && self->answered_ > 0) {
    // Not processed (RFC 9113 8.7): safe to send again. Only on a connection
    // that has answered before, so a server refusing everything fails
    // requests instead of bouncing them forever.
    self->sink_.retry(from);
  } else if (error_code == NGHTTP2_NO_ERROR) {
    self->sink_.failed(from, ErrorKind::protocol, "stream ended without a final response");
  } else {
    std::snprintf(self->why_, sizeof self->why_, "stream reset: %s", nghttp2_http2_strerror(error_code));
    self->sink_.failed(from, ErrorKind::reset, self->why_);
  }
  return 0;
}

ssize_t H2Codec::read_body(nghttp2_session*, int32_t, uint8_t* buf, size_t len, uint32_t* flags,
                           nghttp2_data_source* source, void* user) {
  auto* self = static_cast<H2Codec*>(user);
  auto* slot = static_cast<Slot*>(source->ptr);
  const std::string& body = self->templates_.body;
  size_t n = std::min(len, body.size() - slot->body_offset);
  std::memcpy(buf, body.data() + slot->body_offset, n);
  slot->body_offset += n;
  if (slot->body_offset == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return ssize_t(n);
}

void H2Codec::release(Slot& slot) {
  slot.used = false;
  free_.push_back(uint32_t(&slot - slots_.data()));
  --active_;
}

void H2Codec::fail_all(ErrorKind kind, const char* why) {
  failed_ = true;
  for (Slot& slot : slots_) {
    if (!slot.used) continue;
    int64_t from = slot.from_ns;
    release(slot);
    sink_.failed(from, kind, why);
  }
}

void H2Codec::closed(bool eof, ErrorKind kind, const char* why) {
  if (eof) {
    fail_all(ErrorKind::reset, "connection closed before the response was complete");
  } else {
    fail_all(kind, why);
  }
  end_session();
}

bool H2Codec::finished() const {
  if (!session_ || failed_) return true;
  if ((draining_ || (one_request_ && submitted_)) && active_ == 0) return true;
  return !nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_);
}

int64_t H2Codec::oldest_sent() const {
  int64_t oldest = INT64_MAX;
  for (const Slot& slot : slots_) {
    if (slot.used) oldest = std::min(oldest, slot.sent_ns);
  }
  return oldest;
}

}  // namespace torii::load
