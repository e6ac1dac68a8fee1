#include "upstream/fastcgi/record.h"

#include <algorithm>

namespace torii::upstream::fastcgi {

namespace {

constexpr uint8_t kVersion = 1;
constexpr uint8_t kRoleResponder = 1;
constexpr uint8_t kFlagKeepConn = 1;

void append_length(std::string& out, size_t n) {
  if (n < 128) {
    out.push_back(static_cast<char>(n));
    return;
  }
  out.push_back(static_cast<char>(0x80 | ((n >> 24) & 0x7f)));
  out.push_back(static_cast<char>((n >> 16) & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  out.push_back(static_cast<char>(n & 0xff));
}

}  // namespace

void append_header(std::string& out, RecordType type, size_t content) {
  const char h[kHeaderSize] = {
      static_cast<char>(kVersion),
      static_cast<char>(type),
      static_cast<char>(kRequestId >> 8),
      static_cast<char>(kRequestId & 0xff),
      static_cast<char>((content >> 8) & 0xff),
      static_cast<char>(content & 0xff),
      0,  // padding length
      0,  // reserved
  };
  out.append(h, kHeaderSize);
}

void append_begin_request(std::string& out, bool keep_conn) {
  append_header(out, RecordType::begin_request, 8);
  const char body[8] = {0, static_cast<char>(kRoleResponder), static_cast<char>(keep_conn ? kFlagKeepConn : 0),
                        0, 0, 0, 0, 0};
  out.append(body, sizeof body);
}

void append_name_value(std::string& out, std::string_view name, std::string_view value) {
  append_length(out, name.size());
  append_length(out, value.size());
  out.append(name);
  out.append(value);
}

void append_stream(std::string& out, RecordType type, std::string_view content) {
  while (!content.empty()) {
    const size_t n = std::min(content.size(), kMaxContent);
    append_header(out, type, n);
    out.append(content.substr(0, n));
    content.remove_prefix(n);
  }
}

void append_end_of_stream(std::string& out, RecordType type) { append_header(out, type, 0); }

Decoder::Status Decoder::feed(std::string_view in, size_t& consumed, DecoderEvents& events) {
  consumed = 0;
  if (state_ == State::failed) return Status::error;
  while (state_ != State::ended) {
    switch (state_) {
      case State::header: {
        if (consumed == in.size()) return Status::more;
        const size_t take = std::min(kHeaderSize - header_have_, in.size() - consumed);
        std::copy_n(in.data() + consumed, take, header_ + header_have_);
        header_have_ += take;
        consumed += take;
        if (header_have_ < kHeaderSize) return Status::more;
        header_have_ = 0;
        if (header_[0] != kVersion) return fail("upstream sent unsupported FastCGI protocol version");
        const uint16_t id = static_cast<uint16_t>(header_[2] << 8 | header_[3]);
        type_ = static_cast<RecordType>(header_[1]);
        if (type_ != RecordType::stdout_ && type_ != RecordType::stderr_ && type_ != RecordType::end_request)
          return fail("upstream sent invalid FastCGI record type");
        if (id != kRequestId) return fail("upstream sent unexpected FastCGI request id");
        content_left_ = size_t(header_[4]) << 8 | header_[5];
        padding_left_ = header_[6];
        if (type_ == RecordType::end_request && content_left_ < 8)
          return fail("upstream sent invalid FastCGI END_REQUEST record");
        end_have_ = 0;
        state_ = State::content;
        // An empty STDERR record carries nothing to report; an empty STDOUT
        // one ends the stream, which END_REQUEST also does.
        break;
      }
      case State::content: {
        if (content_left_ == 0) {
          state_ = State::padding;
          break;
        }
        if (consumed == in.size()) return Status::more;
        const size_t take = std::min(content_left_, in.size() - consumed);
        const std::string_view piece = in.substr(consumed, take);
        consumed += take;
        content_left_ -= take;
        if (type_ == RecordType::stdout_) {
          events.on_stdout(piece);
        } else if (type_ == RecordType::stderr_) {
          events.on_stderr(piece, content_left_ == 0);
        } else {
          for (char c : piece) {
            if (end_have_ < sizeof end_body_) end_body_[end_have_++] = static_cast<uint8_t>(c);
          }
        }
        break;
      }
      case State::padding: {
        if (padding_left_ > 0) {
          if (consumed == in.size()) return Status::more;
          const size_t take = std::min(padding_left_, in.size() - consumed);
          consumed += take;
          padding_left_ -= take;
          if (padding_left_ > 0) return Status::more;
        }
        if (type_ == RecordType::end_request) {
          app_status_ = uint32_t(end_body_[0]) << 24 | uint32_t(end_body_[1]) << 16 | uint32_t(end_body_[2]) << 8 |
                        end_body_[3];
          state_ = State::ended;
          return Status::done;
        }
        state_ = State::header;
        break;
      }
      case State::ended:
      case State::failed:
        break;
    }
  }
  return Status::done;
}

}  // namespace torii::upstream::fastcgi
