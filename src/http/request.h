// The protocol-neutral request head. A codec fills it; handlers read it and
// never learn which protocol carried it. Views point into the connection's
// read buffer, which stays put until the exchange ends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/header_token.h"
#include "http/method.h"

namespace torii::http {

struct Header {
  std::string_view name;  // as received (HTTP/1) or lower-case (h2/h3)
  std::string_view value;  // leading/trailing whitespace already trimmed
  HeaderToken token = HeaderToken::none;
};

struct RequestHead {
  Method method = Method::unknown;
  std::string_view method_name;  // the text, for unknown methods and logs
  std::string_view target;       // request-target as received ($request_uri)
  std::string_view raw_path;     // path part of target, still percent-encoded
  std::string_view query;        // after '?', without it ($args); empty if none
  bool has_query = false;        // a '?' was present
  std::string path;              // decoded, dot-segments removed ($uri)
  std::string host;              // lower-cased, without port; from the absolute
                                 // target, else Host, else empty ($host)
  int version = 11;              // 10, 11, 20, 30
  std::vector<Header> headers;

  // Framing facts the codec derived from the headers.
  int64_t content_length = -1;  // -1: none given
  bool chunked = false;
  bool keep_alive = true;       // after Connection / version rules
  bool expect_continue = false;

  // First header with this token, or nullptr.
  const Header* find(HeaderToken t) const {
    for (const auto& h : headers)
      if (h.token == t) return &h;
    return nullptr;
  }
  // First header with this name (case-insensitive), or nullptr.
  const Header* find(std::string_view name) const;
};

}  // namespace torii::http
