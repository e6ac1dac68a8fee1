// The request head of an HTTP/2 or HTTP/3 stream, assembled from the fields
// its codec decoded (nghttp2 or nghttp3 has already checked the framing rules:
// each pseudo-header once, before the regular fields, names lower-case).
// Both protocols carry the same semantics, so one place maps them onto the
// RequestHead that HTTP/1 fills from its own parser: pseudo-headers into the
// method, target and Host; cookie crumbs joined; the size limits answered
// with 431. The codec keeps the decoded buffers alive (views point into
// them); add() says which ones it must keep.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "http/exchange.h"
#include "http/request.h"

namespace torii::http {

class FieldSection {
 public:
  enum class Keep { nothing, value, name_and_value };

  // One decoded field. `field_limit` bounds one name + value, `list_limit`
  // the whole section as RFC 9113 6.5.2 / RFC 9114 4.2.2 count it.
  Keep add(std::string_view name, std::string_view value, size_t field_limit, size_t list_limit);

  // Fills ex.req (version 20 or 30) once the section has ended. 0, or the
  // status to answer with and the reason for the info log line.
  // `had_body`: the stream did not end with its headers.
  int build(Exchange& ex, int version, bool had_body, std::string& reason);

 private:
  std::vector<Header> fields_;
  std::string_view method_, scheme_, authority_, path_;
  std::string cookie_;  // crumbs joined with "; " (RFC 9113 8.2.3, RFC 9114 4.2.1)
  size_t list_size_ = 0;
  bool too_large_ = false;
};

}  // namespace torii::http
