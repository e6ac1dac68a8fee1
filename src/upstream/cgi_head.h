// The response head an application behind a gateway protocol (FastCGI,
// uwsgi) writes before its body: CGI header fields ("Status: 404 Not
// Found", "Location: ...", "Content-Type: ...") up to an empty line, or,
// where the protocol allows it (uwsgi), an HTTP/1.x status line first. A
// pure transform over the bytes the application wrote; the fields are parsed
// by the strict HTTP/1 response-head parser, behind a status line of our own
// when the application sent none. As nginx: "Status" gives the status and
// is not passed on; a Location without Status means 302; else 200.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "http1/response_parser.h"

namespace torii::upstream {

class CgiHeadParser {
 public:
  CgiHeadParser(size_t max_head, bool status_line_allowed)
      : parser_(max_head + kPrefix.size()), status_line_allowed_(status_line_allowed) {}

  // Bytes the application wrote, in order, until parse() says done.
  void append(std::string_view data) { buf_.append(data); }
  // On done, `out` holds views into this parser, valid until reset().
  http1::ParseStatus parse(http1::ParsedResponse& out);
  // The bytes after the head (the body's start), once parse() is done.
  std::string_view rest() const { return std::string_view(buf_).substr(head_end_); }
  void drop_rest() { buf_.resize(head_end_); }
  const char* error() const { return error_; }
  void reset();

  static constexpr std::string_view kPrefix = "HTTP/1.1 200 OK\r\n";

 private:
  http1::ParseStatus fail(const char* why) {
    error_ = why;
    return http1::ParseStatus::error;
  }

  std::string buf_;
  http1::ResponseParser parser_;
  bool status_line_allowed_;
  bool decided_ = false;    // whether the head has a status line is known
  bool synthetic_ = false;  // the status line is ours (a CGI head)
  size_t head_end_ = 0;
  const char* error_ = "";
};

}  // namespace torii::upstream
