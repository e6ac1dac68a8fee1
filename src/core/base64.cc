#include "core/base64.h"

#include <cstdint>

namespace torii::core {

int base64_sextet(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool decode_base64(std::string_view text, std::string& out) {
  size_t len = 0;
  while (len < text.size() && text[len] != '=') {
    if (base64_sextet(static_cast<unsigned char>(text[len])) < 0) return false;
    ++len;
  }
  if (len % 4 == 1) return false;
  out.reserve(out.size() + len * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; ++i) {
    acc = (acc << 6) | static_cast<uint32_t>(base64_sextet(static_cast<unsigned char>(text[i])));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

}  // namespace torii::core
