#include "handlers/fastcgi/fastcgi_codec.h"

#include <algorithm>

#include "handlers/cgi_params.h"
#include "http/exchange.h"

namespace torii::handlers::fastcgi {

namespace fcgi = upstream::fastcgi;

namespace {

constexpr size_t kStderrLogLimit = 4096;  // of one record, in one log line

// PARAMS content, cut into records as it grows.
class ParamsWriter final : public CgiParamSink {
 public:
  explicit ParamsWriter(std::string& out) : out_(out) {}
  void add(std::string_view name, std::string_view value) override {
    fcgi::append_name_value(pending_, name, value);
    if (pending_.size() >= fcgi::kMaxContent) flush();
  }
  void flush() {
    fcgi::append_stream(out_, fcgi::RecordType::params, pending_);
    pending_.clear();
  }

 private:
  std::string& out_;
  std::string pending_;
};

}  // namespace

bool FastcgiCodec::request_head(RequestBody, int64_t, std::string& out) {
  fcgi::append_begin_request(out, cfg_.keep_conn);
  ParamsWriter params(out);
  build_cgi_params(ex_, cfg_, params);
  params.flush();
  fcgi::append_end_of_stream(out, fcgi::RecordType::params);
  return false;
}

void FastcgiCodec::body_piece(std::string_view data, std::string& out) {
  fcgi::append_stream(out, fcgi::RecordType::stdin_, data);
}

void FastcgiCodec::body_end(std::string& out) { fcgi::append_end_of_stream(out, fcgi::RecordType::stdin_); }

void FastcgiCodec::body_record_header(size_t n, std::string& out) {
  fcgi::append_header(out, fcgi::RecordType::stdin_, n);
}

void FastcgiCodec::reset() {
  decoder_.reset();
  head_.reset();
  head_done_ = false;
  caught_ = false;
  stderr_record_.clear();
  error_ = "";
}

http1::ParseStatus FastcgiCodec::parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) {
  const auto st = decoder_.feed(in, consumed, *this);
  if (st == fcgi::Decoder::Status::error) {
    error_ = decoder_.error();
    return http1::ParseStatus::error;
  }
  if (caught_) {
    error_ = "upstream sent invalid header";
    return http1::ParseStatus::error;
  }
  const auto hs = head_.parse(out);
  if (hs == http1::ParseStatus::done) {
    head_done_ = true;
    return hs;
  }
  if (hs == http1::ParseStatus::error) {
    error_ = head_.error();
    return hs;
  }
  if (st == fcgi::Decoder::Status::done) {
    error_ = "upstream prematurely closed FastCGI stdout";
    return http1::ParseStatus::error;
  }
  return http1::ParseStatus::need_more;
}

http1::BodyFraming FastcgiCodec::start_body(const http1::ParsedResponse& r, bool head_request) {
  length_.reset(length_to_hold(r.content_length, r.status, head_request));
  // The body ends with END_REQUEST; a length the application gave is the
  // client's too. A HEAD response's body is read (to keep the connection)
  // and dropped by the exchange.
  return r.content_length >= 0 ? http1::BodyFraming::length : http1::BodyFraming::close;
}

UpstreamCodec::Body FastcgiCodec::feed_body(std::string_view in, size_t& consumed,
                                            const std::function<void(std::string_view)>& emit) {
  consumed = 0;
  if (!head_.rest().empty()) {
    length_.pass(head_.rest(), emit);  // what came in the head's records
    head_.drop_rest();
  }
  if (decoder_.ended()) return ended();
  emit_ = &emit;
  const auto st = decoder_.feed(in, consumed, *this);
  emit_ = nullptr;
  if (st == fcgi::Decoder::Status::error) {
    error_ = decoder_.error();
    return Body::error;
  }
  return st == fcgi::Decoder::Status::done ? ended() : Body::more;
}

// The request ended: the body is whole unless short of its declared length.
UpstreamCodec::Body FastcgiCodec::ended() {
  if (!length_.short_of_it()) return Body::done;
  error_ = "upstream prematurely closed FastCGI request";
  return Body::error;
}

void FastcgiCodec::on_stdout(std::string_view data) {
  if (head_done_ && emit_) {
    length_.pass(data, *emit_);
    return;
  }
  head_.append(data);
}

void FastcgiCodec::on_stderr(std::string_view data, bool record_end) {
  if (stderr_record_.size() < kStderrLogLimit)
    stderr_record_.append(data.substr(0, kStderrLogLimit - stderr_record_.size()));
  if (!record_end) return;
  if (!head_done_) {
    for (const auto& s : cfg_.catch_stderr)
      if (stderr_record_.find(s) != std::string::npos) caught_ = true;
  }
  // As nginx: trailing line ends, spaces and dots are not logged; nothing
  // left, no line.
  while (!stderr_record_.empty() && (stderr_record_.back() == '\n' || stderr_record_.back() == '\r' ||
                                     stderr_record_.back() == ' ' || stderr_record_.back() == '.'))
    stderr_record_.pop_back();
  if (!stderr_record_.empty()) stderr_lines_.push_back(std::move(stderr_record_));
  stderr_record_.clear();
}

bool FastcgiCodec::take_stderr(std::string& out) {
  if (stderr_lines_.empty()) return false;
  out = std::move(stderr_lines_.front());
  stderr_lines_.pop_front();
  return true;
}

}  // namespace torii::handlers::fastcgi
