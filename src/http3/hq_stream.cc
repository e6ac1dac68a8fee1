#include "http3/hq_stream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/clock.h"
#include "core/worker.h"
#include "http/pipeline.h"
#include "http1/parser.h"
#include "http3/hq_session.h"
#include "http3/session.h"
#include "log/error_log.h"

namespace torii::http3 {

namespace {

constexpr size_t kDrainLowMark = 16 * 1024;  // a streaming handler resumes below this
constexpr size_t kFileChunk = 16 * 1024;     // file bytes read per buffer handed to QUIC
constexpr size_t kMaxSpare = 4;

constexpr uint64_t kH3InternalError = 0x0102;
constexpr uint64_t kH3RequestCancelled = 0x010c;

// A request-target byte: visible ASCII (no space, no control characters).
bool target_char(unsigned char c) { return c > 0x20 && c < 0x7f; }

}  // namespace

HqStream::HqStream(HqSession& owner, int64_t id) : owner_(owner), id_(id) {}

HqStream::~HqStream() = default;

// ---- request -------------------------------------------------------------------

HqStream::Input HqStream::on_data(const uint8_t* data, size_t len, bool fin, size_t limit) {
  if (fin) remote_closed_ = true;
  if (request_complete_) return Input::more;
  const size_t before = line_.size();
  line_.append(reinterpret_cast<const char*>(data), std::min(len, limit + 1 - std::min(limit + 1, before)));
  const size_t lf = line_.find('\n', before);
  if (lf == std::string::npos) {
    // Too long for a request line, or the client said all it will.
    return line_.size() > limit || remote_closed_ ? Input::invalid : Input::more;
  }
  line_.resize(lf);
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  if (!parse_line(line_)) return Input::invalid;
  request_complete_ = true;
  return Input::ready;
}

// HTTP/0.9's one form: "GET" SP origin-form target, and the line's end.
// Anything else (another method, a version after the target, an
// absolute-form target) is not an HTTP/0.9 request.
bool HqStream::parse_line(std::string_view line) {
  constexpr std::string_view kGet = "GET ";
  if (!line.starts_with(kGet)) return false;
  const std::string_view target = line.substr(kGet.size());
  if (target.empty() || target[0] != '/') return false;
  for (unsigned char c : target)
    if (!target_char(c)) return false;
  target_ = target;
  return true;
}

void HqStream::run() {
  Session& session = owner_.session();
  const auto& binding = session.binding();
  exchange_.emplace(*this, session.info(), session.host().services());
  http::Exchange& ex = *exchange_;
  ex.config = binding->config;
  // No Host in HTTP/0.9: the server block is the one SNI chose (as nginx does).
  ex.server = &config::find_server(*binding->group, session.info().ssl_server_name);
  ex.start_unix_ms = core::unix_ms();
  ex.early_data = early_data_;
  ex.request_length = int64_t(line_.size()) + 2;
  http::RequestHead& req = ex.req;
  req.version = 9;
  req.method = http::Method::get;
  req.method_name = std::string_view(line_).substr(0, 3);
  req.target = target_;
  req.keep_alive = false;
  const size_t q = target_.find('?');
  req.raw_path = target_.substr(0, q);
  req.has_query = q != std::string_view::npos;
  req.query = req.has_query ? target_.substr(q + 1) : std::string_view();
  if (!http1::normalize_path(req.raw_path, ex.server->merge_slashes, req.path)) {
    TORII_LOG(info, "client sent invalid request target over hq-interop, client: %s",
              session.info().remote_addr.c_str());
    http::send_error(ex, 400);
  } else {
    session.host().run_request(ex);
  }
  if (ex.close_connection && !ex.head_sent() && !closed_) reset(kH3RequestCancelled);  // return 444
  // HTTP/0.9 has nothing after the line: the rest of the client's side is not wanted.
  if (!remote_closed_ && !closed_) session.stop_reading(id_);
}

void HqStream::reset(uint64_t app_error) {
  if (closed_) return;
  owner_.session().reset_stream(id_, app_error);
  owner_.session().host().wake();
}

void HqStream::on_close() {
  if (closed_) return;
  closed_ = true;
  drain_cb_ = nullptr;
  pieces_.clear();
  chunks_.clear();
  queued_memory_ = 0;
  chunks_start_ = end_ = written_ = acked_ = 0;
  if (!exchange_) return;
  http::Exchange& ex = *exchange_;
  // Cut off before its end: 499 if nothing was sent, and the handler lets
  // go of its upstream, as over h3.
  if (!fin_written_) ex.client_gone();
  owner_.session().host().log_request(ex);
}

// ---- response -------------------------------------------------------------------

// HTTP/0.9 has no head: the status stays in the exchange for the log.
void HqStream::send_head(const http::ResponseHead&) {
  if (closed_) return;
  head_ = true;
  exchange_->header_bytes = 0;
  output_changed();
}

void HqStream::send_body(std::string_view data) {
  if (closed_ || data.empty()) return;
  if (!pieces_.empty() && !pieces_.back().file) {
    pieces_.back().data.append(data);
  } else {
    Piece p;
    p.data.assign(data);
    pieces_.push_back(std::move(p));
  }
  queued_memory_ += data.size();
  output_changed();
}

void HqStream::send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) {
  if (closed_ || length <= 0) return;
  Piece p;
  p.file = std::move(file);
  p.offset = offset;
  p.length = length;
  pieces_.push_back(std::move(p));
  output_changed();
}

void HqStream::finish() {
  if (closed_) return;
  finished_ = true;
  if (!head_) {
    reset(kH3InternalError);  // finished with no response: nothing can be sent
    return;
  }
  output_changed();
}

// The upstream failed mid-body: the client must see the response cut, not complete.
void HqStream::abort() {
  if (closed_) return;
  finished_ = true;
  reset(kH3InternalError);
}

void HqStream::output_changed() { owner_.stream_wants_write(*this); }

void HqStream::set_drain_callback(std::function<void()> cb) {
  drain_cb_ = std::move(cb);
  if (drain_due()) owner_.stream_drain_due(*this);
}

bool HqStream::drain_due() const { return drain_cb_ && !closed_ && queued_bytes() <= kDrainLowMark; }

void HqStream::fire_drain() {
  auto cb = std::move(drain_cb_);
  drain_cb_ = nullptr;
  cb();
}

// Moves pieces into chunks while fewer than http3_stream_buffer_size bytes
// are unacknowledged. False: a file could not be read (the stream is reset).
bool HqStream::take_pieces() {
  const size_t budget = owner_.session().stream_buffer_size();
  while (!pieces_.empty() && end_ - acked_ < budget) {
    Piece& p = pieces_.front();
    // The entry goes into the deque first: a short string's bytes live
    // inside the string object, so pointers are taken where it will stay.
    Chunk& c = chunks_.emplace_back();
    if (!p.file) {
      c.data = std::move(p.data);  // the whole piece, as is: no copy
      c.ptr = c.data.data();
      c.len = c.data.size();
      queued_memory_ -= c.len;
      pieces_.pop_front();
    } else {
      const size_t k = size_t(std::min<int64_t>(int64_t(kFileChunk), p.length));
      if (p.file->has_content()) {
        c.file = p.file;
        c.ptr = p.file->content.data() + p.offset;
      } else {
        if (!spare_.empty()) {
          c.data = std::move(spare_.back());
          spare_.pop_back();
        }
        c.data.resize(k);
        if (!http::read_exact(p.file->fd, c.data.data(), k, p.offset)) {
          TORII_LOG(crit, "pread() failed (%d: %s) while sending a file over hq-interop", errno, strerror(errno));
          chunks_.pop_back();
          reset(kH3InternalError);
          return false;
        }
        c.ptr = c.data.data();
      }
      c.len = k;
      p.offset += int64_t(k);
      p.length -= int64_t(k);
      if (p.length == 0) pieces_.pop_front();
    }
    end_ += c.len;
  }
  return true;
}

bool HqStream::has_output() {
  if (closed_ || !head_) return false;
  if (!take_pieces()) return false;
  return written_ < end_ || (finished_ && pieces_.empty() && !fin_written_);
}

size_t HqStream::pending(ngtcp2_vec* vec, size_t veccnt, bool& fin) {
  size_t n = 0;
  bool all = true;  // every unsent byte is in `vec`
  uint64_t at = chunks_start_;
  for (const Chunk& c : chunks_) {
    const uint64_t next = at + c.len;
    if (next > written_) {
      if (n == veccnt) {
        all = false;
        break;
      }
      const size_t skip = written_ > at ? size_t(written_ - at) : 0;
      vec[n].base = reinterpret_cast<uint8_t*>(const_cast<char*>(c.ptr + skip));
      vec[n].len = c.len - skip;
      ++n;
    }
    at = next;
  }
  // The FIN goes with the last bytes.
  fin = all && finished_ && pieces_.empty();
  return n;
}

void HqStream::written(size_t n, bool fin) {
  written_ += n;
  if (exchange_) exchange_->body_bytes_sent += int64_t(n);
  if (fin && written_ == end_ && pieces_.empty()) fin_written_ = true;
}

void HqStream::on_acked(uint64_t n) {
  acked_ += n;
  while (!chunks_.empty() && chunks_start_ + chunks_.front().len <= acked_) {
    Chunk& c = chunks_.front();
    chunks_start_ += c.len;
    if (!c.data.empty() && c.data.capacity() >= kFileChunk && spare_.size() < kMaxSpare)
      spare_.push_back(std::move(c.data));  // reused for the next file chunk
    chunks_.pop_front();
  }
  if (!pieces_.empty()) owner_.stream_wants_write(*this);
  if (drain_due()) owner_.stream_drain_due(*this);
}

}  // namespace torii::http3
