#include "http1/parser.h"

#include "http/field_name_rule.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

namespace torii::http1 {

namespace {

enum State : uint8_t {
  kStart,       // skipping empty lines before the request line
  kStartLf,     // saw the CR of such an empty line
  kMethod,
  kTarget,
  kVersion,
  kLineLf,      // saw the CR that ends the request line
  kFieldStart,  // at the first byte of a field line or of the final empty line
  kName,
  kOws,
  kValue,
  kFieldLf,     // saw the CR that ends a field line
  kEndLf,       // saw the CR of the final empty line
  kDone,
  kError,
};

// Character classes, one table lookup per byte.
enum : uint8_t {
  kTchar = 1 << 0,       // token (RFC 9110 5.6.2)
  kFieldChar = 1 << 1,   // field-vchar, obs-text, SP, HTAB (RFC 9110 5.5)
  kTargetChar = 1 << 2,  // visible ASCII and obs-text: no SP, no controls
  kHostChar = 1 << 3,    // reg-name: unreserved, sub-delims, '%'
  kHex = 1 << 4,
  kDigit = 1 << 5,
  kAlpha = 1 << 6,
  // A method: upper-case letters, '-' and '_'. RFC 9110 9.1 allows any
  // token, but methods are case-sensitive and every registered one is
  // upper case; a "get" forwarded upstream may be served as GET by one
  // server and refused by another. nginx answers 400 to the rest too.
  kMethodChar = 1 << 7,
};

constexpr bool in_set(int c, std::string_view set) {
  for (char x : set)
    if (c == static_cast<unsigned char>(x)) return true;
  return false;
}

constexpr std::array<uint8_t, 256> make_classes() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool digit = c >= '0' && c <= '9';
    uint8_t f = 0;
    if (alpha) f |= kAlpha;
    if (digit) f |= kDigit;
    if (alpha || digit || in_set(c, "!#$%&'*+-.^_`|~")) f |= kTchar;
    if ((c > 0x20 && c != 0x7f) || c == ' ' || c == '\t') f |= kFieldChar;
    if (c > 0x20 && c != 0x7f) f |= kTargetChar;
    if (alpha || digit || in_set(c, "-._~!$&'()*+,;=%")) f |= kHostChar;
    if ((c >= 'A' && c <= 'Z') || c == '-' || c == '_') f |= kMethodChar;
    if (digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) f |= kHex;
    t[static_cast<size_t>(c)] = f;
  }
  return t;
}
constexpr std::array<uint8_t, 256> kClass = make_classes();

inline bool has_class(char c, uint8_t cls) { return (kClass[static_cast<unsigned char>(c)] & cls) != 0; }
inline unsigned char to_lower(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 'A' && u <= 'Z' ? u + 32 : u;
}

// A limit may be configured as "unlimited" (SIZE_MAX); never wrap around.
inline size_t limit_at(size_t start, size_t max) {
  return max > std::numeric_limits<size_t>::max() - start ? std::numeric_limits<size_t>::max() : start + max;
}

inline bool is_eol(char c) { return c == '\r' || c == '\n'; }
inline bool is_ows(char c) { return c == ' ' || c == '\t'; }

// Word-at-a-time tests (exact for thresholds up to 128): some byte of `w`
// is below `n`; some byte equals DEL.
constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr bool has_byte_below(uint64_t w, uint8_t n) { return ((w - kOnes * n) & ~w & kOnes * 0x80) != 0; }
constexpr bool has_del(uint64_t w) { return has_byte_below(w ^ (kOnes * 0x7f), 1); }

// Eight bytes of field value (no control but SP, no DEL; HTAB takes the
// byte loop) or of request target (no control, no SP, no DEL) at once.
template <uint8_t cls>
inline bool word_in_class(uint64_t w) {
  if constexpr (cls == kFieldChar) return !has_byte_below(w, 0x20) && !has_del(w);
  else return !has_byte_below(w, 0x21) && !has_del(w);
}

// Advances over bytes of class `cls`; the fast path of every state. Field
// values and targets, the long runs of a head, go eight bytes a step.
template <uint8_t cls>
inline size_t scan(const char* p, size_t pos, size_t lim) {
  if constexpr (cls == kFieldChar || cls == kTargetChar) {
    for (uint64_t w; pos + 8 <= lim; pos += 8) {
      std::memcpy(&w, p + pos, 8);
      if (!word_in_class<cls>(w)) break;
    }
  }
  while (pos < lim && has_class(p[pos], cls)) ++pos;
  return pos;
}

bool iequals(std::string_view a, std::string_view lower_b) {
  if (a.size() != lower_b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (to_lower(a[i]) != static_cast<unsigned char>(lower_b[i])) return false;
  return true;
}

std::string_view trim_ows(std::string_view v) {
  while (!v.empty() && is_ows(v.front())) v.remove_prefix(1);
  while (!v.empty() && is_ows(v.back())) v.remove_suffix(1);
  return v;
}

}  // namespace

// Host header or authority (RFC 9110 7.2, RFC 3986 3.2.2) into $host's form:
// lower-cased, port dropped, one trailing dot dropped, IPv6 literals kept in
// brackets. Anything outside reg-name or an IP literal is refused, so a Host
// can never smuggle a path, userinfo or spaces into $host or a log line;
// empty labels ("..") are refused as nginx does.
bool normalize_host(std::string_view in, bool need_port, std::string& out) {
  const size_t n = in.size();
  size_t i = 0;
  size_t host_end = 0;
  if (n == 0) return false;
  if (in[0] == '[') {
    for (i = 1; i < n && in[i] != ']'; ++i)
      if (!has_class(in[i], kHex) && in[i] != ':' && in[i] != '.') return false;
    if (i == n || i == 1) return false;
    host_end = ++i;
  } else {
    bool prev_dot = false;
    for (; i < n && in[i] != ':'; ++i) {
      if (!has_class(in[i], kHostChar)) return false;
      const bool dot = in[i] == '.';
      if (dot && prev_dot) return false;
      prev_dot = dot;
    }
    host_end = i;
  }
  if (i < n) {
    if (in[i] != ':') return false;
    ++i;
    if (need_port && i == n) return false;
    for (; i < n; ++i)
      if (in[i] < '0' || in[i] > '9') return false;
  } else if (need_port) {
    return false;
  }
  size_t len = host_end;
  if (in[0] != '[' && len > 0 && in[len - 1] == '.') --len;
  if (len == 0) return false;
  out.resize(len);
  for (size_t k = 0; k < len; ++k) out[k] = static_cast<char>(to_lower(in[k]));
  return true;
}

namespace {

constexpr std::string_view kRootPath = "/";
constexpr std::string_view kAsterisk = "*";

}  // namespace

void RequestParser::reset() {
  // Keep the field vector's storage: a connection parses many heads.
  std::vector<FieldMark> fields = std::move(fields_);
  fields.clear();
  *this = RequestParser(limits_);
  fields_ = std::move(fields);
}

bool RequestParser::first_host(std::string_view data, std::string& out) const {
  if (host_field_ < 0) return false;
  const FieldMark& f = fields_[static_cast<size_t>(host_field_)];
  if (size_t(f.value_off) + f.value_len > data.size()) return false;
  return normalize_host(data.substr(f.value_off, f.value_len), false, out);
}

ParseStatus RequestParser::fail(int status, const char* reason) {
  error_.status = status;
  error_.reason = reason;
  state_ = kError;
  return ParseStatus::error;
}

ParseStatus RequestParser::line_too_long() {
  if (state_ == kMethod || state_ == kTarget || state_ == kVersion)
    return fail(414, "request line too long");
  // nginx answers 400 ("Request Header Or Cookie Too Large", its 494).
  return fail(494, "client sent too long header line");
}

ParseStatus RequestParser::parse(std::string_view data, http::RequestHead& out, size_t& consumed) {
  consumed = 0;
  if (state_ == kError) return ParseStatus::error;
  if (state_ == kDone) return finish(data, out, consumed);
  if (data.size() < scanned_) return fail(400, "request bytes lost between calls");
  if (fields_.capacity() == 0) fields_.reserve(16);

  const char* p = data.data();
  const size_t n = data.size();
  // Offsets are kept in 32 bits; no sane head limit comes near.
  const size_t end = std::min({n, limits_.max_head, size_t{std::numeric_limits<uint32_t>::max()}});
  size_t pos = scanned_;

  // Each content state runs a table-driven loop up to the end of the data or
  // the line's limit, then judges the byte it stopped at. A content byte at
  // the limit means the line is too long; CR or LF there is still fine.
  while (pos < end) {
    switch (state_) {
      case kStart: {
        const char c = p[pos];
        if (c == '\n') {
          ++pos;
        } else if (c == '\r') {
          state_ = kStartLf;
          ++pos;
        } else {
          line_start_ = pos;
          method_start_ = static_cast<uint32_t>(pos);
          line_limit_ = limit_at(pos, limits_.max_request_line);
          state_ = kMethod;
        }
        break;
      }
      case kStartLf:
        if (p[pos] != '\n') return fail(400, "bare CR before request line");
        state_ = kStart;
        ++pos;
        break;

      case kMethod: {
        pos = scan<kMethodChar>(p, pos, std::min(end, line_limit_));
        if (pos == end) continue;
        const char c = p[pos];
        if (pos >= line_limit_ && !is_eol(c)) return line_too_long();
        if (c != ' ' || pos == method_start_) return fail(400, "invalid method");
        method_end_ = static_cast<uint32_t>(pos);
        target_start_ = static_cast<uint32_t>(++pos);
        state_ = kTarget;
        break;
      }
      case kTarget: {
        pos = scan<kTargetChar>(p, pos, std::min(end, line_limit_));
        if (pos == end) continue;
        const char c = p[pos];
        if (pos >= line_limit_ && !is_eol(c)) return line_too_long();
        if (c == ' ') {
          if (pos == target_start_) return fail(400, "invalid request target");
          target_end_ = static_cast<uint32_t>(pos++);
          state_ = kVersion;
          break;
        }
        // "GET /" alone is HTTP/0.9, which we do not speak.
        if (is_eol(c)) return fail(400, "missing HTTP version");
        return fail(400, "invalid character in request target");
      }
      case kVersion: {
        pos = scan<kTargetChar>(p, pos, std::min(end, line_limit_));
        if (pos == end) continue;
        const char c = p[pos];
        if (pos >= line_limit_ && !is_eol(c)) return line_too_long();
        if (!is_eol(c)) return fail(400, "invalid HTTP version");
        version_end_ = static_cast<uint32_t>(pos++);
        if (c == '\r') {
          state_ = kLineLf;
          break;
        }
        if (!end_request_line(p)) return ParseStatus::error;
        line_start_ = pos;
        line_limit_ = limit_at(pos, limits_.max_header_line);
        state_ = kFieldStart;
        break;
      }
      case kLineLf:
        if (p[pos] != '\n') return fail(400, "bare CR in request line");
        ++pos;
        if (!end_request_line(p)) return ParseStatus::error;
        line_start_ = pos;
        line_limit_ = limit_at(pos, limits_.max_header_line);
        state_ = kFieldStart;
        break;

      case kFieldStart: {
        const char c = p[pos];
        if (c == '\r') {
          state_ = kEndLf;
          ++pos;
          break;
        }
        if (c == '\n') {
          consumed_ = pos + 1;
          state_ = kDone;
          return finish(data, out, consumed);
        }
        // RFC 9112 5.2: obs-fold is refused, and so is whitespace between
        // the request line and the first field (RFC 9112 2.2).
        if (is_ows(c)) return fail(400, "obsolete header line folding");
        if (!has_class(c, kTchar)) return fail(400, "invalid header name");
        state_ = kName;
        break;
      }
      case kName: {
        pos = scan<kTchar>(p, pos, std::min(end, line_limit_));
        if (pos == end) continue;
        const char c = p[pos];
        if (pos >= line_limit_ && !is_eol(c)) return line_too_long();
        if (c == ':') {
          name_end_ = static_cast<uint32_t>(pos++);
          state_ = kOws;
          break;
        }
        // RFC 9112 5.1: whitespace before the colon has been used to smuggle.
        if (is_ows(c)) return fail(400, "whitespace before colon in header");
        if (is_eol(c)) return fail(400, "header line without colon");
        return fail(400, "invalid header name");
      }
      case kOws: {
        const size_t lim = std::min(end, line_limit_);
        while (pos < lim && is_ows(p[pos])) ++pos;
        if (pos == end) continue;
        if (pos >= line_limit_ && !is_eol(p[pos])) return line_too_long();
        value_start_ = static_cast<uint32_t>(pos);
        state_ = kValue;
        break;
      }
      case kValue: {
        pos = scan<kFieldChar>(p, pos, std::min(end, line_limit_));
        if (pos == end) continue;
        const char c = p[pos];
        if (pos >= line_limit_ && !is_eol(c)) return line_too_long();
        if (c == '\r') {
          value_end_ = static_cast<uint32_t>(pos++);
          state_ = kFieldLf;
          break;
        }
        if (c != '\n') return fail(400, "invalid character in header value");
        if (!end_field(p, pos)) return ParseStatus::error;
        line_start_ = ++pos;
        line_limit_ = limit_at(pos, limits_.max_header_line);
        state_ = kFieldStart;
        break;
      }
      case kFieldLf:
        if (p[pos] != '\n') return fail(400, "bare CR in header value");
        if (!end_field(p, value_end_)) return ParseStatus::error;
        line_start_ = ++pos;
        line_limit_ = limit_at(pos, limits_.max_header_line);
        state_ = kFieldStart;
        break;
      case kEndLf:
        if (p[pos] != '\n') return fail(400, "bare CR after header section");
        consumed_ = pos + 1;
        state_ = kDone;
        return finish(data, out, consumed);
      default:
        return fail(400, "parser misuse");
    }
  }
  scanned_ = pos;
  // Stopped by the head limit rather than by the end of the data.
  if (end < n) return fail(494, "client sent too large request header section");
  return ParseStatus::need_more;
}

bool RequestParser::end_request_line(const char* p) {
  // RFC 9112 2.3: exactly "HTTP/" DIGIT "." DIGIT, case-sensitive.
  const std::string_view v(p + target_end_ + 1, version_end_ - target_end_ - 1);
  if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || !has_class(v[5], kDigit) || v[6] != '.' ||
      !has_class(v[7], kDigit)) {
    fail(400, "invalid HTTP version");
    return false;
  }
  if (v[5] == '0') {
    fail(400, "HTTP/0.x is not supported");
    return false;
  }
  if (v[5] != '1') {
    fail(505, "unsupported HTTP version");
    return false;
  }
  // A higher 1.x minor is answered as 1.1 (RFC 9110 2.5).
  version_ = v[7] == '0' ? 10 : 11;

  const std::string_view method(p + method_start_, method_end_ - method_start_);
  const std::string_view target(p + target_start_, target_end_ - target_start_);
  const bool connect = method == "CONNECT";
  uint32_t rest = target_start_;  // where path, query and fragment begin

  if (connect) {
    // RFC 9110 9.3.6: CONNECT takes authority-form and nothing else.
    if (target[0] == '/' || target[0] == '*') {
      fail(400, "CONNECT needs an authority-form target");
      return false;
    }
    form_ = TargetForm::authority;
    authority_start_ = target_start_;
    authority_end_ = target_end_;
    return true;
  }
  if (target[0] == '/') {
    form_ = TargetForm::origin;
  } else if (target == "*") {
    if (method != "OPTIONS") {
      fail(400, "asterisk-form target outside OPTIONS");
      return false;
    }
    form_ = TargetForm::asterisk;
    return true;
  } else {
    // absolute-form: scheme "://" authority [path-abempty] ["?" query]
    size_t i = 0;
    if (!has_class(target[0], kAlpha)) {
      fail(400, "invalid request target");
      return false;
    }
    while (i < target.size() && (has_class(target[i], kAlpha) || has_class(target[i], kDigit) ||
                                 target[i] == '+' || target[i] == '-' || target[i] == '.'))
      ++i;
    if (target.substr(i, 3) != "://") {
      fail(400, "invalid request target");
      return false;
    }
    i += 3;
    const size_t a = i;
    while (i < target.size() && target[i] != '/' && target[i] != '?' && target[i] != '#') ++i;
    if (i == a) {
      fail(400, "missing host in request target");
      return false;
    }
    form_ = TargetForm::absolute;
    authority_start_ = static_cast<uint32_t>(target_start_ + a);
    authority_end_ = static_cast<uint32_t>(target_start_ + i);
    rest = authority_end_;
  }

  // A fragment is not part of a request-target; drop it as nginx does.
  const std::string_view tail(p + rest, target_end_ - rest);
  size_t stop = tail.find('#');
  if (stop == std::string_view::npos) stop = tail.size();
  const size_t q = tail.substr(0, stop).find('?');
  path_start_ = rest;
  if (q == std::string_view::npos) {
    path_end_ = static_cast<uint32_t>(rest + stop);
  } else {
    path_end_ = static_cast<uint32_t>(rest + q);
    has_query_ = true;
    query_start_ = path_end_ + 1;
    query_end_ = static_cast<uint32_t>(rest + stop);
  }
  return true;
}

bool RequestParser::end_field(const char* p, size_t value_end) {
  while (value_end > value_start_ && is_ows(p[value_end - 1])) --value_end;
  const std::string_view name(p + line_start_, name_end_ - line_start_);
  const std::string_view value(p + value_start_, value_end - value_start_);
  // A name nginx calls invalid ('_' without underscores_in_headers, '.'
  // and the like) is dropped under ignore_invalid_headers, not refused.
  if (http::drops_field_name(name, limits_.allow_underscores, limits_.ignore_invalid)) return true;

  if (fields_.size() >= limits_.max_headers) {
    fail(494, "client sent too many header lines");
    return false;
  }
  const http::HeaderToken token = http::lookup_header_token(name);
  fields_.push_back(FieldMark{static_cast<uint32_t>(line_start_), value_start_,
                              static_cast<uint32_t>(value.size()), static_cast<uint32_t>(name.size()),
                              token});
  switch (token) {
    case http::HeaderToken::content_length:
      if (const char* why = add_content_length(value)) {
        fail(400, why);
        return false;
      }
      break;
    case http::HeaderToken::transfer_encoding:
      add_transfer_encoding(value);
      break;
    case http::HeaderToken::host:
      if (host_field_ >= 0) {
        fail(400, "duplicate Host header");
        return false;
      }
      host_field_ = static_cast<int>(fields_.size() - 1);
      break;
    case http::HeaderToken::connection:
      add_connection(value);
      break;
    case http::HeaderToken::expect:
      if (iequals(value, "100-continue")) expect_continue_ = true;
      break;
    default:
      break;
  }
  return true;
}

const char* RequestParser::add_content_length(std::string_view v) {
  // RFC 9110 8.6: a list of identical values may stand for one value; any
  // disagreement is a framing attack and the request is refused.
  size_t i = 0;
  const size_t n = v.size();
  for (;;) {
    if (i == n || !has_class(v[i], kDigit)) return "invalid Content-Length";
    int64_t x = 0;
    for (; i < n && has_class(v[i], kDigit); ++i) {
      const int d = v[i] - '0';
      if (x > (std::numeric_limits<int64_t>::max() - d) / 10) return "Content-Length too large";
      x = x * 10 + d;
    }
    if (content_length_ >= 0 && content_length_ != x) return "conflicting Content-Length values";
    content_length_ = x;
    while (i < n && is_ows(v[i])) ++i;
    if (i == n) return nullptr;
    if (v[i] != ',') return "invalid Content-Length";
    ++i;
    while (i < n && is_ows(v[i])) ++i;
  }
}

void RequestParser::add_transfer_encoding(std::string_view v) {
  // Codings accumulate across fields in order (RFC 9110 5.3); the verdict
  // waits for the end of the head.
  te_seen_ = true;
  bool any = false;
  size_t i = 0;
  const size_t n = v.size();
  while (i < n) {
    if (v[i] == ',' || is_ows(v[i])) {
      ++i;
      continue;
    }
    const size_t s = i;
    while (i < n && has_class(v[i], kTchar)) ++i;
    if (i == s) {
      te_invalid_ = true;
      return;
    }
    const std::string_view coding = v.substr(s, i - s);
    while (i < n && is_ows(v[i])) ++i;
    bool params = false;
    if (i < n && v[i] == ';') {
      // transfer-parameters: none of ours takes any, so skip them whole.
      params = true;
      while (i < n && v[i] != ',') ++i;
    } else if (i < n && v[i] != ',') {
      te_invalid_ = true;
      return;
    }
    any = true;
    if (!params && iequals(coding, "chunked")) {
      // RFC 9112 7: chunked is applied at most once.
      if (te_chunked_seen_) te_invalid_ = true;
      te_chunked_seen_ = true;
      te_last_chunked_ = true;
    } else {
      te_unknown_ = true;
      te_last_chunked_ = false;
    }
  }
  if (!any) te_invalid_ = true;
}

void RequestParser::add_connection(std::string_view v) {
  size_t i = 0;
  while (i <= v.size()) {
    size_t comma = v.find(',', i);
    if (comma == std::string_view::npos) comma = v.size();
    const std::string_view option = trim_ows(v.substr(i, comma - i));
    if (iequals(option, "close")) conn_close_ = true;
    else if (iequals(option, "keep-alive")) conn_keep_alive_ = true;
    i = comma + 1;
  }
}

ParseStatus RequestParser::finish(std::string_view data, http::RequestHead& out, size_t& consumed) {
  const char* p = data.data();
  if (data.size() < consumed_) return fail(400, "request bytes lost between calls");

  // RFC 9112 3.2: an HTTP/1.1 request without Host is refused.
  if (version_ >= 11 && host_field_ < 0) {
    error_.no_host = true;
    return fail(400, "missing Host header");
  }
  bool chunked = false;
  if (te_seen_) {
    // RFC 9112 6.1 and 6.3: the checks that stop request smuggling.
    if (version_ == 10) return fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (content_length_ >= 0) return fail(400, "both Content-Length and Transfer-Encoding");
    if (te_invalid_) return fail(400, "invalid Transfer-Encoding");
    // RFC 9112 6.1: a coding we do not implement is 501, before 6.3's 400
    // for a list that does not end in chunked (nginx answers the same).
    if (te_unknown_) return fail(501, "unsupported transfer coding");
    if (!te_last_chunked_) return fail(400, "invalid Transfer-Encoding");
    chunked = true;
  }

  out.host.clear();
  if (host_field_ >= 0) {
    const FieldMark& f = fields_[static_cast<size_t>(host_field_)];
    if (!normalize_host({p + f.value_off, f.value_len}, false, out.host))
      return fail(400, "invalid Host header");
  }
  const std::string_view authority(p + authority_start_, authority_end_ - authority_start_);
  const std::string_view target(p + target_start_, target_end_ - target_start_);
  switch (form_) {
    case TargetForm::origin:
    case TargetForm::absolute: {
      out.raw_path = std::string_view(p + path_start_, path_end_ - path_start_);
      out.target = target;
      if (form_ == TargetForm::absolute) {
        // RFC 9112 3.2.2: the target's authority wins over Host.
        if (!normalize_host(authority, false, out.host)) {
          error_.in_target = true;
          return fail(400, "invalid host in request target");
        }
        if (out.raw_path.empty()) out.raw_path = kRootPath;
        // $request_uri is the origin-form part, as in nginx.
        out.target = std::string_view(p + authority_end_, target_end_ - authority_end_);
        if (out.target.empty()) out.target = kRootPath;
      }
      if (!normalize_path(out.raw_path, true, out.path)) {
        error_.in_target = true;
        return fail(400, "invalid path in request target");
      }
      break;
    }
    case TargetForm::asterisk:
      out.target = target;
      out.raw_path = kAsterisk;
      out.path.assign(kAsterisk);
      break;
    case TargetForm::authority:
      if (!normalize_host(authority, true, out.host)) return fail(400, "invalid CONNECT target");
      out.target = target;
      out.raw_path = {};
      out.path.clear();
      break;
  }
  out.has_query = has_query_;
  out.query = has_query_ ? std::string_view(p + query_start_, query_end_ - query_start_) : std::string_view();

  out.method_name = std::string_view(p + method_start_, method_end_ - method_start_);
  out.method = http::parse_method(out.method_name);
  out.version = version_;
  out.headers.clear();
  out.headers.reserve(std::max<size_t>(16, fields_.size()));
  for (const FieldMark& f : fields_)
    out.headers.push_back(http::Header{std::string_view(p + f.name_off, f.name_len),
                                       std::string_view(p + f.value_off, f.value_len), f.token});
  out.content_length = chunked ? -1 : content_length_;
  out.chunked = chunked;
  out.keep_alive = version_ >= 11 ? !conn_close_ : conn_keep_alive_ && !conn_close_;
  out.expect_continue = version_ >= 11 && expect_continue_;
  consumed = consumed_;
  return ParseStatus::done;
}

}  // namespace torii::http1
