#include "http1/response_parser.h"

#include <cstring>

#include "core/ascii.h"

namespace torii::http1 {

namespace {

// Character classes as tables: every byte of a head goes through one, and
// a load beats a chain of comparisons.
struct CharClasses {
  bool tchar[256] = {};
  bool field[256] = {};  // field-vchar, obs-text, SP and HTAB
  constexpr CharClasses() {
    for (int c = 0; c < 256; ++c) {
      tchar[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      field[c] = c == '\t' || (c >= 0x20 && c != 0x7f);
    }
    for (const char* p = "!#$%&'*+-.^_`|~"; *p; ++p) tchar[static_cast<unsigned char>(*p)] = true;
  }
};
constexpr CharClasses kClasses;

inline bool is_tchar(unsigned char c) { return kClasses.tchar[c]; }
inline bool is_field_char(unsigned char c) { return kClasses.field[c]; }

using core::iequals;

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

// Calls f(token) for each element of a comma-separated list, trimmed, empty ones skipped.
template <typename F>
void each_token(std::string_view v, F&& f) {
  while (!v.empty()) {
    size_t comma = v.find(',');
    std::string_view item = trim(v.substr(0, comma));
    if (!item.empty()) f(item);
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
}

}  // namespace

BodyFraming response_framing(const ParsedResponse& r, bool head_request) {
  if (head_request || (r.status >= 100 && r.status < 200) || r.status == 204 || r.status == 304)
    return BodyFraming::none;
  if (r.has_transfer_encoding) return r.chunked ? BodyFraming::chunked : BodyFraming::close;
  if (r.content_length >= 0) return BodyFraming::length;
  return BodyFraming::close;
}

ParseStatus ResponseParser::parse(std::string_view data, ParsedResponse& out, size_t& consumed) {
  // Look for the empty line that ends the head: "\r\n\r\n" or bare "\n\n".
  size_t i = scanned_ > 0 ? scanned_ - 1 : 0;
  size_t end = std::string_view::npos;
  for (; i < data.size(); ++i) {
    const void* lf = std::memchr(data.data() + i, '\n', data.size() - i);
    if (!lf) {
      i = data.size();
      break;
    }
    i = size_t(static_cast<const char*>(lf) - data.data());
    if (i + 1 < data.size() && data[i + 1] == '\n') {
      end = i + 2;
      break;
    }
    if (i + 2 < data.size() && data[i + 1] == '\r' && data[i + 2] == '\n') {
      end = i + 3;
      break;
    }
  }
  if (end == std::string_view::npos) {
    // Keep the last two bytes unjudged: the terminator may straddle reads.
    scanned_ = data.size() > 2 ? data.size() - 2 : 0;
    if (data.size() > max_head_) return fail("upstream sent too big header");
    return ParseStatus::need_more;
  }
  if (end > max_head_) return fail("upstream sent too big header");
  // A fresh result that keeps the field list's room (an interim
  // response's, else room for the usual head's fields in one allocation).
  auto headers = std::move(out.headers);
  headers.clear();
  out = ParsedResponse();
  out.headers = std::move(headers);
  out.headers.reserve(16);
  auto st = parse_head(data.substr(0, end), out);
  if (st != ParseStatus::done) return st;
  consumed = end;
  return ParseStatus::done;
}

ParseStatus ResponseParser::parse_head(std::string_view head, ParsedResponse& out) {
  // Split off one line at a time; a line ends in LF, optionally after CR.
  auto next_line = [&head](std::string_view& line) -> bool {
    size_t lf = head.find('\n');
    if (lf == std::string_view::npos) return false;
    line = head.substr(0, lf);
    head.remove_prefix(lf + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  };
  std::string_view line;
  if (!next_line(line)) return fail("upstream sent no valid HTTP/1.0 header");
  // status-line = HTTP-version SP status-code SP [ reason-phrase ]
  if (line.size() < 12 || line.substr(0, 5) != "HTTP/" || line[5] != '1' || line[6] != '.' ||
      line[7] < '0' || line[7] > '9' || line[8] != ' ')
    return fail("upstream sent no valid HTTP/1.0 header");
  out.version = line[7] == '0' ? 10 : 11;
  int status = 0;
  for (size_t k = 9; k < 12; ++k) {
    if (line[k] < '0' || line[k] > '9') return fail("upstream sent no valid HTTP/1.0 header");
    status = status * 10 + (line[k] - '0');
  }
  if (status < 100) return fail("upstream sent no valid HTTP/1.0 header");
  out.status = status;
  if (line.size() > 12) {
    if (line[12] != ' ') return fail("upstream sent no valid HTTP/1.0 header");
    std::string_view reason = line.substr(13);
    for (char c : reason)
      if (!is_field_char(static_cast<unsigned char>(c))) return fail("upstream sent invalid status line");
    out.reason = reason;
  }

  while (next_line(line)) {
    if (line.empty()) return ParseStatus::done;
    if (line[0] == ' ' || line[0] == '\t') return fail("upstream sent obsolete line folding");
    size_t colon = 0;
    while (colon < line.size() && is_tchar(static_cast<unsigned char>(line[colon]))) ++colon;
    if (colon == 0 || colon == line.size() || line[colon] != ':') return fail("upstream sent invalid header");
    std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    for (char c : value)
      if (!is_field_char(static_cast<unsigned char>(c))) return fail("upstream sent invalid header");
    if (out.headers.size() >= max_headers_) return fail("upstream sent too many headers");
    if (!add_field(name, trim(value), out)) return ParseStatus::error;
  }
  return fail("upstream sent invalid header");  // unreachable: the head ends in an empty line
}

bool ResponseParser::add_field(std::string_view name, std::string_view value, ParsedResponse& out) {
  http::HeaderToken token = http::lookup_header_token(name);
  out.headers.push_back({name, value, token});
  switch (token) {
    case http::HeaderToken::content_length: {
      // "5" or a list of equal values ("5, 5"); anything else is refused.
      int64_t v = -1;
      bool bad = false;
      each_token(value, [&](std::string_view item) {
        int64_t n = 0;
        if (item.size() > 18) bad = true;  // beyond any real body, and int64_t
        for (char c : item) {
          if (bad) return;
          if (c < '0' || c > '9') bad = true;
          n = n * 10 + (c - '0');
        }
        if (bad) return;
        if (v >= 0 && v != n) bad = true;
        v = n;
      });
      if (bad || v < 0 || (out.content_length >= 0 && out.content_length != v)) {
        fail("upstream sent invalid \"Content-Length\" header");
        return false;
      }
      out.content_length = v;
      return true;
    }
    case http::HeaderToken::transfer_encoding: {
      bool bad = false;
      each_token(value, [&](std::string_view item) {
        if (out.chunked) bad = true;  // chunked must be the last coding, and only once
        if (iequals(item, "chunked")) out.chunked = true;
      });
      out.has_transfer_encoding = true;
      if (bad) {
        fail("upstream sent invalid \"Transfer-Encoding\" header");
        return false;
      }
      return true;
    }
    case http::HeaderToken::connection:
      each_token(value, [&](std::string_view item) {
        if (iequals(item, "close")) out.conn_close = true;
        else if (iequals(item, "keep-alive")) out.conn_keep_alive = true;
        else if (iequals(item, "upgrade")) out.conn_upgrade = true;
      });
      return true;
    default:
      return true;
  }
}

}  // namespace torii::http1
