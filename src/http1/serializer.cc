#include "http1/serializer.h"

#include <cstring>
#include <string_view>

#include "http/field_bytes.h"

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

inline char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
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
  const unsigned code = status >= 0 && status <= 999 ? static_cast<unsigned>(status) : 500u;
  const std::string_view reason =
      head.reason.empty() || head.reason_status != status ? http::reason_phrase(static_cast<int>(code)) : std::string_view(head.reason);

  // The head is written through a pointer into room made once: appending
  // piece by piece checked the capacity and called memcpy four times a field.
  constexpr std::string_view kLength = "Content-Length: ";
  constexpr std::string_view kChunked = "Transfer-Encoding: chunked\r\n";
  constexpr std::string_view kKeepAlive = "Connection: keep-alive\r\n";
  constexpr std::string_view kClose = "Connection: close\r\n";
  constexpr std::string_view kTimeout = "Keep-Alive: timeout=";
  size_t need = 9 + 4 + reason.size() + 2 + kLength.size() + 20 + 2 + kChunked.size() + kKeepAlive.size() +
                kTimeout.size() + 20 + 2 + 2;
  for (const auto& h : head.headers) need += h.first.size() + h.second.size() + 4;
  const size_t start = out.size();
  out.resize(start + need);
  char* const base = out.data();
  char* p = base + start;

  // nginx answers HTTP/1.0 clients with an HTTP/1.1 status line as well
  // (RFC 9110 2.5: the highest minor version the server supports).
  p = put(p, "HTTP/1.1 ");
  *p++ = static_cast<char>('0' + code / 100);
  *p++ = static_cast<char>('0' + code / 10 % 10);
  *p++ = static_cast<char>('0' + code % 10);
  *p++ = ' ';
  p = put(p, reason);
  p = put(p, "\r\n");

  bool own_connection = false;
  for (const auto& h : head.headers) {
    const std::string& name = h.first;
    // Framing and connection fields are ours to decide; the head's copies
    // would contradict what we write below. A 101 keeps its Connection
    // (Upgrade), which names the protocol switch.
    switch (name.size()) {
      case 0:
        continue;
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
    // CR, LF or NUL in a field would split the response (header
    // injection), so such a field is left out rather than sent.
    if (!http::no_cr_lf_nul(name) || !http::no_cr_lf_nul(h.second)) continue;
    p = put(p, name);
    *p++ = ':';
    *p++ = ' ';
    p = put(p, h.second);
    *p++ = '\r';
    *p++ = '\n';
  }

  if (send_length) {
    p = put(p, kLength);
    p = put_uint(p, static_cast<uint64_t>(head.content_length));
    p = put(p, "\r\n");
  }
  if (send_chunked) p = put(p, kChunked);
  if (!own_connection) {
    // HTTP/1.1 keeps alive unless told; Keep-Alive is named in Connection
    // when sent (a hop-by-hop field, RFC 9110 7.6.1), as nginx does.
    const bool timeout = opts.keep_alive && opts.keepalive_header_s > 0;
    if (opts.version <= 10 || timeout) {
      if (opts.keep_alive) p = put(p, kKeepAlive);
    } else if (!opts.keep_alive) {
      p = put(p, kClose);
    }
    if (timeout) {
      p = put(p, kTimeout);
      p = put_uint(p, static_cast<uint64_t>(opts.keepalive_header_s));
      p = put(p, "\r\n");
    }
  }
  p = put(p, "\r\n");
  out.resize(static_cast<size_t>(p - base));
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
