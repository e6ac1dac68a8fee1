#include "http1/serializer.h"

#include <string_view>

namespace torii::http1 {

namespace {

inline unsigned char lower(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 'A' && u <= 'Z' ? u + 32 : u;
}

// `lower_name` is lower-case.
inline bool name_is(const std::string& name, std::string_view lower_name) {
  if (name.size() != lower_name.size()) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (lower(name[i]) != static_cast<unsigned char>(lower_name[i])) return false;
  return true;
}

// CR, LF or NUL in a field would split the response (header injection), so
// such a field is left out rather than sent.
inline bool safe_field(const std::string& s) {
  for (char c : s)
    if (c == '\r' || c == '\n' || c == '\0') return false;
  return true;
}

// Writes `v` in decimal at `p`, returns the end.
inline char* put_uint(char* p, uint64_t v) {
  char tmp[20];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n) *p++ = tmp[--n];
  return p;
}

inline void append_uint(std::string& out, uint64_t v) {
  char buf[20];
  out.append(buf, static_cast<size_t>(put_uint(buf, v) - buf));
}

inline void append_field(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out.append(": ", 2);
  out.append(value);
  out.append("\r\n", 2);
}

}  // namespace

void serialize_response_head(const http::ResponseHead& head, const SerializeOptions& opts,
                             std::string& out) {
  const int status = head.status;
  // RFC 9110 6.4.1 and 8.6: 1xx and 204 never carry a body nor its framing;
  // nginx also sends no Content-Length with 304.
  const bool no_body = (status >= 100 && status < 200) || status == 204 || status == 304;
  const bool upgrade = status == 101;
  const bool send_length = !no_body && !opts.chunked && head.content_length >= 0;
  // nginx applies no chunked coding to a HEAD response: no body follows.
  const bool send_chunked = !no_body && opts.chunked && !opts.head_only;

  size_t need = 64;
  for (const auto& h : head.headers) need += h.first.size() + h.second.size() + 4;
  out.reserve(out.size() + need + 64);

  // nginx answers HTTP/1.0 clients with an HTTP/1.1 status line as well
  // (RFC 9110 2.5: the highest minor version the server supports).
  out.append("HTTP/1.1 ", 9);
  const unsigned code = status >= 0 && status <= 999 ? static_cast<unsigned>(status) : 500u;
  char digits[3] = {static_cast<char>('0' + code / 100), static_cast<char>('0' + code / 10 % 10),
                    static_cast<char>('0' + code % 10)};
  out.append(digits, 3);
  out.push_back(' ');
  out.append(http::reason_phrase(static_cast<int>(code)));
  out.append("\r\n", 2);

  bool own_connection = false;
  for (const auto& h : head.headers) {
    const std::string& name = h.first;
    // Framing and connection fields are ours to decide; the head's copies
    // would contradict what we write below. A 101 keeps its Connection
    // (Upgrade), which names the protocol switch.
    switch (name.size()) {
      case 10:
        if (name_is(name, "connection")) {
          if (!upgrade) continue;
          own_connection = true;
        }
        break;
      case 14:
        if (name_is(name, "content-length") && (no_body || send_length || send_chunked)) continue;
        break;
      case 17:
        if (name_is(name, "transfer-encoding")) continue;
        break;
      default:
        break;
    }
    if (name.empty() || !safe_field(name) || !safe_field(h.second)) continue;
    append_field(out, name, h.second);
  }

  if (send_length) {
    out.append("Content-Length: ", 16);
    append_uint(out, static_cast<uint64_t>(head.content_length));
    out.append("\r\n", 2);
  }
  if (send_chunked) out.append("Transfer-Encoding: chunked\r\n", 28);
  if (!own_connection) {
    if (opts.version <= 10) {
      if (opts.keep_alive) out.append("Connection: keep-alive\r\n", 24);
    } else if (!opts.keep_alive) {
      out.append("Connection: close\r\n", 19);
    }
  }
  out.append("\r\n", 2);
}

void append_chunk_header(size_t size, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[2 * sizeof(size_t) + 2];
  char* end = buf + sizeof(buf);
  char* p = end;
  *--p = '\n';
  *--p = '\r';
  do {
    *--p = kHex[size & 0xf];
    size >>= 4;
  } while (size != 0);
  out.append(p, static_cast<size_t>(end - p));
}

namespace {

bool equals_lower(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

bool token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool trailer_allowed(std::string_view name, std::string_view value) {
  if (name.empty()) return false;
  for (char c : name)
    if (!token_char(c)) return false;
  for (char c : value)
    if (c == '\r' || c == '\n' || c == '\0') return false;
  static constexpr std::string_view kNever[] = {"content-length", "transfer-encoding", "connection", "keep-alive",
                                                "te", "trailer", "upgrade", "host", "content-encoding",
                                                "content-type", "content-range", "set-cookie"};
  for (auto n : kNever)
    if (equals_lower(name, n)) return false;
  return true;
}

}  // namespace

void append_last_chunk(const std::vector<std::pair<std::string, std::string>>& fields, std::string& out) {
  out += "0\r\n";
  for (const auto& [name, value] : fields) {
    if (!trailer_allowed(name, value)) continue;
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  out += "\r\n";
}

}  // namespace torii::http1
