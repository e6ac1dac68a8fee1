// HTTP/1.x response head serialisation.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/response.h"

namespace torii::http1 {

struct SerializeOptions {
  int version = 11;        // the request's: 10 or 11
  bool keep_alive = true;  // adds Connection: keep-alive / close as needed
  bool chunked = false;    // adds Transfer-Encoding: chunked
  bool head_only = false;  // HEAD: headers as for GET, no body follows
  // keepalive_timeout's second value, in seconds (0: none): a kept-alive
  // response says `Keep-Alive: timeout=N`, which HTTP clients' connection
  // pools read to stop reusing a connection before the server closes it.
  int64_t keepalive_header_s = 0;
};

// Appends the status line and header fields, ending with the empty line.
// Content-Length comes from head.content_length when >= 0.
void serialize_response_head(const http::ResponseHead& head, const SerializeOptions& opts,
                             std::string& out);

// Chunked framing helpers.
void append_chunk_header(size_t size, std::string& out);  // "1f4\r\n"
inline constexpr std::string_view kChunkEnd = "\r\n";
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// The last chunk with `fields` as its trailer section. Fields that may not
// be trailers (framing, routing, connection fields) and any name or value
// that could break the framing are left out.
void append_last_chunk(const std::vector<std::pair<std::string, std::string>>& fields, std::string& out);

}  // namespace torii::http1
