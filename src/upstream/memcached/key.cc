#include "upstream/memcached/key.h"

namespace torii::upstream::memcached {

namespace {

bool needs_escape(unsigned char c) { return c <= 0x20 || c == '%'; }

}  // namespace

void append_escaped_key(std::string_view key, std::string& out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    if (!needs_escape(c)) {
      out.push_back(ch);
      continue;
    }
    out.push_back('%');
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
}

void append_get(std::string_view key, std::string& out, std::string& escaped) {
  escaped.clear();
  append_escaped_key(key, escaped);
  out.append("get ");
  out.append(escaped);
  out.append("\r\n");
}

}  // namespace torii::upstream::memcached
