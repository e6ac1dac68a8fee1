#include "handlers/grpc/grpc_codec.h"

#include <algorithm>
#include <cstring>

#include "core/ascii.h"
#include "handlers/proxy_headers.h"
#include "http/exchange.h"
#include "http/header_token.h"

namespace torii::handlers::grpc {

namespace {

using core::iequals;

// Connection-specific fields have no place in HTTP/2 (RFC 9113 8.2.2);
// Host becomes :authority and TE is set to "trailers" by us.
bool dropped(std::string_view name) {
  static constexpr std::string_view kNames[] = {"host",    "connection",        "keep-alive", "proxy-connection",
                                                "upgrade", "transfer-encoding", "te",         "http2-settings"};
  return std::any_of(std::begin(kNames), std::end(kNames), [&](std::string_view n) { return iequals(n, name); });
}

// Body bytes kept from the first so that a try on another connection can
// send them again (a kept connection the upstream closed, a refused
// stream); a longer streamed body is let go as it leaves.
constexpr size_t kKeptBody = 64 * 1024;

// The call a session callback reports to (none while the connection is idle).
GrpcCodec* owner(void* user) { return static_cast<GrpcConnection*>(user)->codec(); }

nghttp2_nv nv(std::string_view name, std::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

GrpcCodec::GrpcCodec(const http::Exchange& ex, const config::ProxyConfig& cfg)
    : ex_(&ex), cfg_(cfg), uri_(upstream_uri(ex, cfg)) {}

GrpcCodec::~GrpcCodec() = default;

void GrpcCodec::reset() {
  conn_.reset();  // a failed try's connection is closed with it
  session_ = nullptr;
  connection_known_ = false;
  stream_ = -1;
  pending_off_ = 0;  // a new connection gets the body kept so far from its start
  stage_ = Stage::head;
  status_ = 0;
  headers_.clear();
  trailers_.clear();
  head_done_ = false;
  body_.clear();
  closed_ = false;
  close_error_ = 0;
  goaway_ = false;
  refused_ = false;
  error_ = "";
}

bool GrpcCodec::adopt_connection(std::unique_ptr<upstream::ConnectionState>& state) {
  if (!state) {  // a new connection: start_session() makes its session
    connection_known_ = true;
    return true;
  }
  auto* kept = dynamic_cast<GrpcConnection*>(state.get());
  if (!kept) return false;  // an HTTP/1 connection of a shared group
  // Only a connection that could carry another call was kept; what came
  // while it was idle may have changed that.
  if (!kept->open_for_calls()) return false;
  state.release();
  conn_.reset(kept);
  session_ = conn_->session();
  conn_->set_codec(this);  // the callbacks report to this call now
  connection_known_ = true;
  return true;
}

std::unique_ptr<upstream::ConnectionState> GrpcCodec::detach_connection() {
  if (!conn_) return nullptr;
  conn_->set_codec(nullptr);
  session_ = nullptr;
  connection_known_ = false;
  return std::move(conn_);
}

// After a call that ended cleanly: its stream closed without error, the
// upstream is not going away, the connection is sound (a protocol error
// failed the call already) and has stream ids left.
bool GrpcCodec::reusable(const http1::ParsedResponse&) const {
  return conn_ && closed_ && close_error_ == NGHTTP2_NO_ERROR && !refused_ && conn_->open_for_calls();
}

// The proxy's HTTP/1 head (proxy_set_header rules and all) read back as
// HTTP/2 fields.
bool GrpcCodec::request_head(RequestBody body, int64_t length, std::string& out) {
  std::string head;
  if (ex_) build_request_head(*ex_, cfg_, uri_, body, length, head);
  has_body_ = body != RequestBody::none;
  std::vector<std::pair<std::string, std::string>> fields;
  std::string method, path, authority;
  size_t pos = 0;
  bool first = true;
  while (pos < head.size()) {
    size_t eol = head.find("\r\n", pos);
    if (eol == std::string::npos || eol == pos) break;
    std::string_view line(head.data() + pos, eol - pos);
    pos = eol + 2;
    if (first) {
      first = false;
      const size_t sp1 = line.find(' ');
      const size_t sp2 = line.rfind(' ');
      method = std::string(line.substr(0, sp1));
      path = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (iequals(name, "host")) {
      authority = std::string(value);
      continue;
    }
    if (dropped(name)) continue;
    std::string lower(name);
    for (auto& c : lower)
      if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    fields.emplace_back(std::move(lower), std::string(value));
  }
  request_fields_ = {{":method", method}, {":scheme", cfg_.ssl ? "https" : "http"}, {":path", path},
                     {":authority", authority}};
  for (auto& f : fields) request_fields_.push_back(std::move(f));
  request_fields_.emplace_back("te", "trailers");
  // The stream opens once the try knows its connection (adopt_connection).
  (void)out;
  return false;
}

void GrpcCodec::start_session() {
  if (stream_ >= 0 || !connection_known_) return;
  if (!session_) new_session();
  std::vector<nghttp2_nv> nva;
  nva.reserve(request_fields_.size());
  for (const auto& [name, value] : request_fields_) nva.push_back(nv(name, value));
  nghttp2_data_provider prd;
  prd.source.ptr = this;
  prd.read_callback = &GrpcCodec::read_body;
  stream_ = nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(), has_body_ ? &prd : nullptr, this);
  if (stream_ < 0) {
    stream_ = 0;  // receive() fails the try
    error_ = "could not open a stream to upstream";
  }
}

void GrpcCodec::new_session() {
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_header_callback(cb, &GrpcCodec::on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, &GrpcCodec::on_frame_recv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, &GrpcCodec::on_data_chunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, &GrpcCodec::on_stream_close);
  conn_ = std::make_unique<GrpcConnection>(cb);
  nghttp2_session_callbacks_del(cb);
  conn_->set_codec(this);
  session_ = conn_->session();
  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                       {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 65535}};
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 2);
}

void GrpcCodec::body_piece(std::string_view data, std::string& out) {
  if (pending_off_ > 0 && pending_off_ == pending_.size() && pending_.size() + data.size() > kKeptBody) {
    pending_.clear();
    pending_off_ = 0;
    trimmed_ = true;
  }
  pending_.append(data);
  if (session_ && stream_ > 0) nghttp2_session_resume_data(session_, stream_);
  produce(out);
}

void GrpcCodec::body_end(std::string& out) {
  body_done_ = true;
  if (session_ && stream_ > 0) nghttp2_session_resume_data(session_, stream_);
  produce(out);
}

void GrpcCodec::produce(std::string& out) {
  start_session();
  if (!session_) return;  // the try has no connection yet
  for (;;) {
    const uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n <= 0) break;
    out.append(reinterpret_cast<const char*>(data), size_t(n));
  }
}

ssize_t GrpcCodec::read_body(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                             nghttp2_data_source* source, void*) {
  auto* self = static_cast<GrpcCodec*>(source->ptr);  // the stream's call
  const size_t left = self->pending_.size() - self->pending_off_;
  if (left == 0) {
    if (self->body_done_) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    return NGHTTP2_ERR_DEFERRED;
  }
  const size_t n = std::min(left, length);
  std::memcpy(buf, self->pending_.data() + self->pending_off_, n);
  self->pending_off_ += n;
  if (self->pending_off_ == self->pending_.size() && self->body_done_) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return ssize_t(n);
}

int GrpcCodec::on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t namelen,
                         const uint8_t* value, size_t valuelen, uint8_t, void* user) {
  auto* self = owner(user);
  if (!self || frame->hd.type != NGHTTP2_HEADERS || frame->hd.stream_id != self->stream_) return 0;
  std::string_view n(reinterpret_cast<const char*>(name), namelen);
  std::string_view v(reinterpret_cast<const char*>(value), valuelen);
  if (self->stage_ == Stage::head) {
    if (n == ":status") {
      int status = 0;
      for (char c : v) status = c >= '0' && c <= '9' ? status * 10 + (c - '0') : 0;
      self->status_ = status;
    } else if (!n.empty() && n[0] != ':') {
      self->headers_.emplace_back(std::string(n), std::string(v));
    }
  } else if (!n.empty() && n[0] != ':') {
    self->trailers_.emplace_back(std::string(n), std::string(v));
  }
  return 0;
}

int GrpcCodec::on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  static_cast<GrpcConnection*>(user)->on_frame(frame->hd.type);
  auto* self = owner(user);
  if (!self) return 0;
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    // The connection ends; a stream above the last one the upstream names
    // was never looked at (RFC 9113 6.8), so the call may go elsewhere.
    self->goaway_ = true;
    if (self->stream_ > 0 && frame->goaway.last_stream_id < self->stream_ && !self->head_done_) self->refused_ = true;
    return 0;
  }
  if (frame->hd.type != NGHTTP2_HEADERS || frame->hd.stream_id != self->stream_) return 0;
  if (self->stage_ == Stage::head) {
    if (self->status_ >= 100 && self->status_ < 200) {  // interim: the real head follows
      self->status_ = 0;
      self->headers_.clear();
      return 0;
    }
    self->head_done_ = true;
    self->stage_ = Stage::body;
  } else {
    self->stage_ = Stage::trailers;
  }
  return 0;
}

int GrpcCodec::on_data_chunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data, size_t len,
                             void* user) {
  auto* self = owner(user);
  if (!self) static_cast<GrpcConnection*>(user)->on_frame(NGHTTP2_DATA);  // idle: nobody asked
  if (self && stream_id == self->stream_) self->body_.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int GrpcCodec::on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user) {
  auto* self = owner(user);
  if (!self || stream_id != self->stream_) return 0;
  self->closed_ = true;
  self->close_error_ = error_code;
  if (error_code == NGHTTP2_REFUSED_STREAM && !self->head_done_) self->refused_ = true;
  return 0;
}

bool GrpcCodec::receive(std::string_view in) {
  start_session();
  if (stream_ <= 0 || !session_) {
    if (!*error_) error_ = "no stream open to upstream";
    return false;
  }
  if (in.empty()) return true;
  const ssize_t rv = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(in.data()), in.size());
  if (rv < 0) {
    error_ = "upstream sent invalid HTTP/2";
    return false;
  }
  return true;
}

http1::ParseStatus GrpcCodec::parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) {
  consumed = in.size();
  if (!receive(in)) return http1::ParseStatus::error;
  if (!head_done_) {
    if (closed_) {
      error_ = refused_ && goaway_ ? "upstream sent goaway before the stream"
               : refused_          ? "upstream refused the stream"
               : close_error_      ? "upstream reset the stream"
                                   : "upstream closed the stream without a response";
      return http1::ParseStatus::error;
    }
    return http1::ParseStatus::need_more;
  }
  out = http1::ParsedResponse{};
  out.version = 11;
  out.status = status_;
  for (const auto& [name, value] : headers_) {
    http::Header h;
    h.name = name;
    h.value = value;
    h.token = http::lookup_header_token(name);
    out.headers.push_back(h);
    if (name == "content-length") {
      int64_t len = 0;
      for (char c : value) len = len * 10 + (c - '0');
      out.content_length = len;
    }
  }
  return http1::ParseStatus::done;
}

UpstreamCodec::Body GrpcCodec::feed_body(std::string_view in, size_t& consumed,
                                          const std::function<void(std::string_view)>& emit) {
  consumed = in.size();
  if (!receive(in)) return Body::error;
  if (!body_.empty()) {
    std::string chunk;
    chunk.swap(body_);
    emit(chunk);
  }
  if (!closed_) return Body::more;
  if (close_error_ != NGHTTP2_NO_ERROR) {
    error_ = "upstream reset the stream";
    return Body::error;
  }
  return Body::done;
}

bool GrpcCodec::take_trailers(std::vector<std::pair<std::string, std::string>>& out) {
  if (trailers_.empty()) return false;
  out = std::move(trailers_);
  trailers_.clear();
  return true;
}

}  // namespace torii::handlers::grpc
