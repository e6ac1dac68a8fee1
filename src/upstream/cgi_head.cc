#include "upstream/cgi_head.h"

#include <algorithm>

#include "core/ascii.h"

namespace torii::upstream {

using core::iequals;

void CgiHeadParser::reset() {
  buf_.clear();
  parser_.reset();
  decided_ = false;
  synthetic_ = false;
  head_end_ = 0;
  error_ = "";
}

http1::ParseStatus CgiHeadParser::parse(http1::ParsedResponse& out) {
  if (!decided_) {
    constexpr std::string_view kHttp = "HTTP/";
    const size_t n = std::min(buf_.size(), kHttp.size());
    const bool maybe_http = status_line_allowed_ && buf_.compare(0, n, kHttp.substr(0, n)) == 0;
    if (maybe_http && buf_.size() < kHttp.size()) return http1::ParseStatus::need_more;
    if (!maybe_http) buf_.insert(0, kPrefix);
    synthetic_ = !maybe_http;
    decided_ = true;
  }
  size_t consumed = 0;
  const auto st = parser_.parse(buf_, out, consumed);
  if (st != http1::ParseStatus::done) {
    if (st == http1::ParseStatus::error) error_ = parser_.error();
    return st;
  }
  head_end_ = consumed;
  // "Status: 404 Not Found" (the status line, if any, gave the code already).
  bool has_status = false;
  bool has_location = false;
  for (size_t i = 0; i < out.headers.size(); ++i) {
    const auto& h = out.headers[i];
    if (iequals(h.name, "location")) has_location = true;
    if (!iequals(h.name, "status")) continue;
    std::string_view v = h.value;
    if (v.size() < 3 || !std::all_of(v.begin(), v.begin() + 3, [](char c) { return c >= '0' && c <= '9'; }) ||
        (v.size() > 3 && v[3] != ' '))
      return fail("upstream sent invalid status");
    const int code = (v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0');
    if (code < 100) return fail("upstream sent invalid status");
    out.status = code;
    out.reason = v.size() > 4 ? v.substr(4) : std::string_view();
    has_status = true;
    out.headers.erase(out.headers.begin() + static_cast<std::ptrdiff_t>(i));
    --i;
  }
  if (!has_status && has_location && synthetic_) {
    out.status = 302;
    out.reason = "Moved Temporarily";
  }
  return http1::ParseStatus::done;
}

}  // namespace torii::upstream
