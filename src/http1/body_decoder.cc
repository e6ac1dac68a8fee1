// BodyDecoder: request body framing (RFC 9112 6.2 Content-Length, 7.1
// chunked). Like the head parser it keeps its place between calls, so the
// caller may hand it any split of the stream.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "http1/parser.h"

namespace torii::http1 {

namespace {

enum BodyState : int {
  kLength = 0,    // Content-Length body; also a never-started decoder
  kSize,          // first hex digit of a chunk-size
  kSizeMore,      // further hex digits
  kExt,           // chunk-ext, skipped up to the end of the line
  kSizeLf,        // CR seen at the end of the chunk-size line
  kData,
  kDataCr,        // the CRLF after chunk data
  kDataLf,
  kTrailerStart,  // start of a trailer field line or of the final empty line
  kTrailerLine,
  kTrailerLf,     // CR seen at the end of a trailer field line
  kTrailerEndLf,  // CR seen on the final empty line
  kBodyDone,
  kBodyError,
};

// A chunk-size line (size plus extensions) and the whole trailer section are
// metadata nobody here reads; bound them so they cannot hold memory or time.
constexpr uint32_t kMaxChunkLine = 4096;
constexpr uint32_t kMaxTrailer = 32 * 1024;

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Controls other than HTAB never belong in an extension or a trailer field.
inline bool is_bad_ctl(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && u != '\t') || u == 0x7f;
}

}  // namespace

void BodyDecoder::start_length(int64_t content_length) {
  chunked_ = false;
  remaining_ = content_length > 0 ? content_length : 0;
  error_ = "";
  state_ = kLength;
}

void BodyDecoder::start_chunked() {
  chunked_ = true;
  remaining_ = 0;
  error_ = "";
  state_ = kSize;
  line_len_ = 0;
  trailer_len_ = 0;
  trailer_text_.clear();
}

BodyDecoder::Status BodyDecoder::fail(const char* reason) {
  error_ = reason;
  state_ = kBodyError;
  return Status::error;
}

BodyDecoder::Status BodyDecoder::decode_impl(std::string_view in, size_t& consumed,
                                             void (*cb)(void*, std::string_view), void* ctx) {
  consumed = 0;
  if (state_ == kBodyError) return Status::error;
  if (state_ == kBodyDone) return Status::done;

  if (!chunked_) {
    const size_t take = static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(remaining_), in.size()));
    if (take > 0) {
      cb(ctx, in.substr(0, take));
      remaining_ -= static_cast<int64_t>(take);
    }
    consumed = take;
    if (remaining_ > 0) return Status::need_more;
    state_ = kBodyDone;
    return Status::done;
  }

  const char* p = in.data();
  const size_t n = in.size();
  size_t pos = 0;
  while (pos < n) {
    const char c = p[pos];
    switch (state_) {
      case kSize: {
        const int v = hex_value(c);
        if (v < 0) return fail("invalid chunk size");
        remaining_ = v;
        line_len_ = 1;
        state_ = kSizeMore;
        ++pos;
        break;
      }
      case kSizeMore: {
        const int v = hex_value(c);
        if (v >= 0) {
          if (remaining_ > (std::numeric_limits<int64_t>::max() >> 4)) return fail("chunk size too large");
          remaining_ = remaining_ * 16 + v;
          if (++line_len_ > kMaxChunkLine) return fail("chunk size line too long");
          ++pos;
          break;
        }
        // BWS may precede ';' (RFC 9112 7.1.1).
        if (c == ';' || c == ' ' || c == '\t') {
          state_ = kExt;
          break;
        }
        if (c == '\r') {
          state_ = kSizeLf;
          ++pos;
          break;
        }
        if (c != '\n') return fail("invalid chunk size");
        ++pos;
        state_ = remaining_ == 0 ? kTrailerStart : kData;
        break;
      }
      case kExt: {
        // Extensions are not interpreted; they only need to stay on the line.
        size_t i = pos;
        while (i < n && p[i] != '\r' && p[i] != '\n') {
          if (is_bad_ctl(p[i])) return fail("invalid chunk extension");
          ++i;
        }
        if (line_len_ + (i - pos) > kMaxChunkLine) return fail("chunk size line too long");
        line_len_ += static_cast<uint32_t>(i - pos);
        pos = i;
        if (pos == n) break;
        ++pos;
        if (p[i] == '\r') state_ = kSizeLf;
        else state_ = remaining_ == 0 ? kTrailerStart : kData;
        break;
      }
      case kSizeLf:
        if (c != '\n') return fail("bare CR in chunk size line");
        ++pos;
        state_ = remaining_ == 0 ? kTrailerStart : kData;
        break;
      case kData: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(remaining_), n - pos));
        cb(ctx, std::string_view(p + pos, take));
        pos += take;
        remaining_ -= static_cast<int64_t>(take);
        if (remaining_ == 0) state_ = kDataCr;
        break;
      }
      case kDataCr:
        // A bare LF is tolerated here as in the head (RFC 9112 2.2).
        if (c == '\r') state_ = kDataLf;
        else if (c == '\n') state_ = kSize;
        else return fail("missing CRLF after chunk data");
        ++pos;
        break;
      case kDataLf:
        if (c != '\n') return fail("missing CRLF after chunk data");
        state_ = kSize;
        ++pos;
        break;
      case kTrailerStart:
        if (c == '\r') {
          state_ = kTrailerEndLf;
          ++pos;
          break;
        }
        if (c == '\n') {
          consumed = pos + 1;
          state_ = kBodyDone;
          return Status::done;
        }
        state_ = kTrailerLine;
        break;
      case kTrailerLine: {
        size_t i = pos;
        while (i < n && p[i] != '\r' && p[i] != '\n') {
          if (is_bad_ctl(p[i])) return fail("invalid trailer field");
          ++i;
        }
        // Counted the same way however the stream is split.
        const size_t line = (i - pos) + (i < n ? 1 : 0);
        if (trailer_len_ + line > kMaxTrailer) return fail("trailer section too large");
        trailer_len_ += static_cast<uint32_t>(line);
        if (keep_trailers_) trailer_text_.append(p + pos, i - pos);
        pos = i;
        if (pos == n) break;
        ++pos;
        if (keep_trailers_) trailer_text_.push_back('\n');
        state_ = p[i] == '\r' ? kTrailerLf : kTrailerStart;
        break;
      }
      case kTrailerLf:
        if (c != '\n') return fail("bare CR in trailer section");
        state_ = kTrailerStart;
        ++pos;
        break;
      case kTrailerEndLf:
        if (c != '\n') return fail("bare CR after trailer section");
        consumed = pos + 1;
        state_ = kBodyDone;
        return Status::done;
      default:
        return fail("body decoder misuse");
    }
  }
  consumed = pos;
  return Status::need_more;
}

std::vector<std::pair<std::string, std::string>> BodyDecoder::take_trailers() {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string_view text = trailer_text_;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    const size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    bool token = true;  // RFC 9110 5.1: a field name is a token (no folding, no spaces)
    for (const char c : name)
      token = token && c > 0x20 && c < 0x7f && c != '(' && c != ')' && c != ',' && c != '/' && c != ';' &&
              c != '<' && c != '=' && c != '>' && c != '?' && c != '@' && c != '[' && c != ']' && c != '\\' &&
              c != '"' && c != '{' && c != '}';
    if (!token) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    fields.emplace_back(std::string(name), std::string(value));
  }
  trailer_text_.clear();
  return fields;
}

}  // namespace torii::http1
