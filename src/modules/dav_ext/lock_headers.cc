#include "modules/dav_ext/lock_headers.h"

namespace torii::dav_ext {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A cursor over a field value that reads as NUL past its end, so the
// grammar below is the module's, which walks a NUL-terminated string.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  char peek() const { return i < s.size() ? s[i] : '\0'; }
  bool at_end() const { return i >= s.size(); }
  void skip_spaces() {
    while (peek() == ' ') ++i;
  }
  void skip_until(char a, char b = '\0') {
    while (!at_end() && s[i] != a && s[i] != b) ++i;
  }
  bool take(std::string_view word) {
    if (!s.substr(i).starts_with(word)) return false;
    i += word.size();
    return true;
  }
  // Eight hex digits; the first byte that is not one is consumed too, as
  // in the module (never past the end).
  std::optional<uint32_t> hex8() {
    uint32_t v = 0;
    for (int n = 0; n < 8; ++n) {
      const int d = hex_digit(peek());
      if (!at_end()) ++i;
      if (d < 0) return std::nullopt;
      v = v * 16 + uint32_t(d);
    }
    return v;
  }
};

// A list's tag covers `uri` when it is `uri` or a folder above it.
bool tag_covers(std::string_view tag, std::string_view uri) {
  if (tag.empty() || tag.size() > uri.size()) return false;
  if (tag.size() < uri.size() && tag.back() != '/') return false;
  return uri.starts_with(tag);
}

}  // namespace

std::optional<std::string_view> local_path(std::string_view url, const Origin& origin) {
  if (!url.empty() && url[0] == '/') return url;
  if (origin.host.empty()) return std::nullopt;
  const std::string_view scheme = origin.tls ? "https://" : "http://";
  if (!url.starts_with(scheme)) return std::nullopt;
  const std::string_view rest = url.substr(scheme.size());
  // As the module: the host is a prefix (a port may follow), the path
  // starts at the first '/' after it.
  if (!rest.starts_with(origin.host)) return std::nullopt;
  const size_t slash = rest.find('/', origin.host.size());
  if (slash == std::string_view::npos) return std::nullopt;
  return rest.substr(slash);
}

uint32_t lock_token_value(std::string_view value) {
  Cursor c{value};
  if (!c.take("<urn:")) return 0;
  const std::optional<uint32_t> token = c.hex8();
  if (!token || c.peek() != '>') return 0;
  return *token;
}

uint32_t if_header_token(std::string_view value, std::string_view request_uri, std::string_view uri,
                         const Origin& origin) {
  Cursor c{value};
  std::string_view tag = request_uri;
  while (!c.at_end()) {
    c.skip_spaces();
    if (c.peek() == '<') {
      const size_t start = ++c.i;
      c.skip_until('>');
      if (c.at_end()) break;
      tag = value.substr(start, c.i++ - start);
      if (auto path = local_path(tag, origin)) tag = *path;
      c.skip_spaces();
    }
    if (c.peek() != '(') break;
    ++c.i;
    if (!tag_covers(tag, uri)) {
      c.skip_until(')');
      if (c.peek() == ')') ++c.i;
      continue;
    }
    // The list's conditions, up to its ')'.
    while (!c.at_end()) {
      c.skip_spaces();
      if (c.take("Not")) {
        c.skip_spaces();  // and the condition it negates is passed over below
      } else if (c.peek() == '[') {
        ++c.i;
        c.skip_until(']');
      } else if (c.take("<urn:")) {
        const std::optional<uint32_t> token = c.hex8();
        if (token && c.peek() == '>') return *token;
      }
      c.skip_until(' ', ')');
      if (c.peek() == ')') {
        ++c.i;
        break;
      }
    }
  }
  return 0;
}

void append_token(std::string& out, uint32_t token, bool brackets) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (brackets) out += '<';
  out += "urn:";
  for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(token >> shift) & 15];
  if (brackets) out += '>';
}

}  // namespace torii::dav_ext
