// HTTP/1.x response head parsing, for the upstream side of the proxy: a pure
// transform like the request parser (no socket, no timer). Incremental: it
// remembers how far it has looked for the end of the head, so a head that
// arrives in pieces is not rescanned. Strict (RFC 9112): a malformed status
// line or field, obs-fold, whitespace before the colon, conflicting
// Content-Length or a misplaced chunked coding is an error (nginx's "upstream
// sent invalid header"), never a guess. Body framing reuses BodyDecoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "http/request.h"
#include "http1/parser.h"

namespace torii::http1 {

struct ParsedResponse {
  int version = 11;  // 10 or 11
  int status = 0;
  std::string_view reason;
  std::vector<http::Header> headers;  // views into the parsed buffer
  int64_t content_length = -1;        // -1: none
  bool chunked = false;               // Transfer-Encoding ends in chunked
  bool has_transfer_encoding = false;
  bool conn_close = false;
  bool conn_keep_alive = false;
  bool conn_upgrade = false;

  // The peer may keep the connection for another request (RFC 9112 9.3).
  bool keep_alive() const {
    if (conn_close || (has_transfer_encoding && !chunked)) return false;
    return version >= 11 || conn_keep_alive;
  }
};

// How the body of a response is delimited (RFC 9112 6.3).
enum class BodyFraming : uint8_t { none, length, chunked, close };
BodyFraming response_framing(const ParsedResponse& r, bool head_request);

class ResponseParser {
 public:
  explicit ResponseParser(size_t max_head = 64 * 1024, size_t max_headers = 100)
      : max_head_(max_head), max_headers_(max_headers) {}

  // Feed the buffer holding the head so far, always from its first byte. On
  // done, `consumed` is the head's length and `out` holds views into `data`.
  ParseStatus parse(std::string_view data, ParsedResponse& out, size_t& consumed);
  // Why parsing failed ("upstream sent too big header", ...).
  const char* error() const { return error_; }
  void reset() {
    scanned_ = 0;
    error_ = "";
  }

 private:
  ParseStatus fail(const char* reason) {
    error_ = reason;
    return ParseStatus::error;
  }
  ParseStatus parse_head(std::string_view head, ParsedResponse& out);
  bool add_field(std::string_view name, std::string_view value, ParsedResponse& out);

  size_t max_head_;
  size_t max_headers_;
  size_t scanned_ = 0;  // bytes already searched for the end of the head
  const char* error_ = "";
};

}  // namespace torii::http1
