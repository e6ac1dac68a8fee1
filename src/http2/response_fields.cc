#include "http2/response_fields.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "core/ascii.h"

namespace torii::http2 {

namespace {

using core::iequals;

// Visible ASCII but the colon.
constexpr std::array<bool, 256> kNameByte = [] {
  std::array<bool, 256> t{};
  for (int c = '!'; c < 0x7f; ++c) t[size_t(c)] = c != ':';
  return t;
}();

// True if any byte of the 8 in `w` is zero (the classic bit trick).
constexpr bool has_zero_byte(uint64_t w) { return ((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull) != 0; }

}  // namespace

bool dropped_in_h2(std::string_view name) {
  return iequals(name, "connection") || iequals(name, "keep-alive") || iequals(name, "proxy-connection") ||
         iequals(name, "transfer-encoding") || iequals(name, "upgrade") || iequals(name, "content-length");
}

bool safe_name(std::string_view s) {
  if (s.empty()) return false;
  bool ok = true;
  for (unsigned char c : s) ok &= kNameByte[c];
  return ok;
}

bool safe_value(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (has_zero_byte(w) || has_zero_byte(w ^ 0x0d0d0d0d0d0d0d0dull) || has_zero_byte(w ^ 0x0a0a0a0a0a0a0a0aull))
      return false;
  }
  for (; n > 0; ++p, --n)
    if (*p == '\r' || *p == '\n' || *p == '\0') return false;
  return true;
}

}  // namespace torii::http2
