// HTTP/1.x request parsing (RFC 9112): a pure transform with no socket and
// no timer. The head parser is incremental (it keeps its place between calls
// and never rescans bytes it has judged) and zero-copy (the RequestHead's
// views point into the caller's buffer). Body framing is a separate decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "http/request.h"

namespace torii::http1 {

struct ParserLimits {
  size_t max_request_line = 8 * 1024;  // longer: 414
  size_t max_header_line = 8 * 1024;   // longer header field line: 494 (sent as 400)
  // The whole head: client_header_buffer_size plus large_client_header_buffers
  // number * size, the buffers nginx fills: more is 494 (sent as 400).
  size_t max_head = 32 * 1024 + 1024;
  // max_headers: one more field line is refused with 494 (nginx's internal
  // code for a 400 "Request Header Or Cookie Too Large").
  size_t max_headers = 1000;
  bool allow_underscores = false;      // underscores_in_headers
  bool ignore_invalid = true;          // ignore_invalid_headers (http/field_name_rule.h)
};

enum class ParseStatus { need_more, done, error };

struct ParseError {
  int status = 400;          // 400, 414, 494 (too large, too many fields), 501 (unknown Transfer-Encoding), 505
  const char* reason = "";  // for the error log: "invalid header name", ...
  bool no_host = false;      // an HTTP/1.1 request without Host (nginx answers from the default server)
  bool in_target = false;    // the request line's target, refused before any Host counts (as nginx)
};

class RequestParser {
 public:
  explicit RequestParser(const ParserLimits& limits) : limits_(limits) {}

  // Feed the buffer holding the head so far, always from the same start
  // (the first byte of the request line; leading empty lines are skipped as
  // RFC 9112 2.2 allows). Between calls the caller may move the buffer, but
  // bytes already passed keep their offsets. On done, `consumed` is the
  // head's length including the final CRLF, and `out` is filled with views
  // into `data`. On error, error() says why.
  ParseStatus parse(std::string_view data, http::RequestHead& out, size_t& consumed);

  const ParseError& error() const { return error_; }
  void reset();

  // The first Host field read so far, in $host's form; false when none was
  // read or it is not valid. `data` is the buffer given to parse(). (An
  // error met after it belongs to that Host's server, as in nginx.)
  bool first_host(std::string_view data, std::string& out) const;

 private:
  // A header field as offsets into the caller's buffer: the buffer may move
  // between calls, so views are made only once the head is complete.
  struct FieldMark {
    uint32_t name_off;
    uint32_t value_off;
    uint32_t value_len;
    uint32_t name_len;
    http::HeaderToken token;
  };
  // Where the request-target's parts lie, found once the request line ends.
  enum class TargetForm : uint8_t { origin, absolute, asterisk, authority };

  ParseStatus fail(int status, const char* reason);
  ParseStatus line_too_long();
  bool end_request_line(const char* p);
  bool end_field(const char* p, size_t value_end);
  const char* add_content_length(std::string_view value);  // nullptr: fine
  void add_transfer_encoding(std::string_view value);
  void add_connection(std::string_view value);
  ParseStatus finish(std::string_view data, http::RequestHead& out, size_t& consumed);

  ParserLimits limits_;
  ParseError error_;
  size_t scanned_ = 0;  // bytes judged so far
  size_t line_start_ = 0;
  size_t line_limit_ = 0;  // first offset a line's content may not reach
  size_t consumed_ = 0;
  uint8_t state_ = 0;

  // Request line.
  uint32_t method_start_ = 0;
  uint32_t method_end_ = 0;
  uint32_t target_start_ = 0;
  uint32_t target_end_ = 0;
  uint32_t version_end_ = 0;
  uint32_t path_start_ = 0;  // raw_path, within the target
  uint32_t path_end_ = 0;
  uint32_t query_start_ = 0;  // after '?'
  uint32_t query_end_ = 0;
  uint32_t authority_start_ = 0;  // absolute- and authority-form
  uint32_t authority_end_ = 0;
  TargetForm form_ = TargetForm::origin;
  bool has_query_ = false;
  int version_ = 11;

  // Current field line.
  uint32_t name_end_ = 0;
  uint32_t value_start_ = 0;
  uint32_t value_end_ = 0;
  std::vector<FieldMark> fields_;

  // Facts gathered from fields as they complete.
  int64_t content_length_ = -1;
  int host_field_ = -1;
  bool te_seen_ = false;
  bool te_chunked_seen_ = false;
  bool te_last_chunked_ = false;
  bool te_unknown_ = false;  // a well-formed coding other than chunked
  bool te_invalid_ = false;  // chunked twice, or a malformed list
  bool conn_close_ = false;
  bool conn_keep_alive_ = false;
  bool expect_continue_ = false;
};

// Decodes a request body framed by Content-Length or chunked coding.
class BodyDecoder {
 public:
  enum class Status { need_more, done, error };

  // content_length >= 0, or chunked.
  void start_length(int64_t content_length);
  void start_chunked();

  // Consumes framing from `in`; appends body bytes to `out` as views into
  // `in` (one view per call at most for Content-Length; chunked may yield
  // several, so `out` collects them). `consumed` is how far `in` was read.
  // Trailer fields of chunked bodies are read and dropped.
  template <typename Sink>
  Status decode(std::string_view in, size_t& consumed, Sink&& on_data);

  int64_t remaining() const { return remaining_; }
  const char* error() const { return error_; }

  // Chunked: keep the trailer section's field lines for take_trailers()
  // (proxy_pass_trailers); otherwise they are read and dropped.
  void keep_trailers() { keep_trailers_ = true; }
  // The trailer fields read, as (name, value); lines that are not a
  // well-formed field are left out.
  std::vector<std::pair<std::string, std::string>> take_trailers();

 private:
  Status decode_impl(std::string_view in, size_t& consumed, void (*cb)(void*, std::string_view), void* ctx);
  Status fail(const char* reason);
  bool chunked_ = false;
  int64_t remaining_ = 0;  // of the body (Content-Length) or of the chunk
  const char* error_ = "";
  int state_ = 0;
  uint32_t line_len_ = 0;     // bytes of the current chunk-size line
  uint32_t trailer_len_ = 0;  // bytes of trailer fields so far
  bool keep_trailers_ = false;
  std::string trailer_text_;  // kept trailer lines, each ended by '\n'
};

template <typename Sink>
BodyDecoder::Status BodyDecoder::decode(std::string_view in, size_t& consumed, Sink&& on_data) {
  auto cb = [](void* ctx, std::string_view d) { (*static_cast<std::remove_reference_t<Sink>*>(ctx))(d); };
  return decode_impl(in, consumed, cb, &on_data);
}

// Percent-decodes and normalises a request path (RFC 3986 5.2.4 dot
// segments, nginx's merge_slashes). Fails on "%00", bad escapes, or ".."
// above the root; the caller answers 400.
bool normalize_path(std::string_view raw_path, bool merge_slashes, std::string& out);

// A Host field or :authority into $host's form (lower-cased, port and one
// trailing dot dropped). False if it is not a valid host; `need_port`
// demands a port (CONNECT). Shared with the HTTP/2 and HTTP/3 codecs.
bool normalize_host(std::string_view in, bool need_port, std::string& out);

}  // namespace torii::http1
