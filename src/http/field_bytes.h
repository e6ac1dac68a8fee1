// The byte check every response field passes before a codec writes it:
// CR, LF or NUL in a name or value would split the field or end the head
// (header injection). It runs on every byte of every response head, so it
// looks at eight bytes a step.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace torii::http {

namespace detail {
// True if some byte of `w` is below 14 (the bit trick for "has a byte less
// than n", exact for n <= 128): CR, LF and NUL are all below it, and so is
// little else that a field holds (HTAB), which then takes the byte loop.
constexpr bool has_byte_below_14(uint64_t w) {
  return ((w - 0x0e0e0e0e0e0e0e0eull) & ~w & 0x8080808080808080ull) != 0;
}
inline bool cr_lf_nul(char c) { return c == '\r' || c == '\n' || c == '\0'; }
}  // namespace detail

// No CR, LF or NUL in `s`. The last word overlaps the one before it (and
// a field of 4 to 7 bytes is two overlapping 4-byte loads), so no field
// ends in a loop over its odd bytes.
inline bool no_cr_lf_nul(std::string_view s) {
  const char* p = s.data();
  const size_t n = s.size();
  const auto bytes_ok = [](const char* q, size_t k) {
    for (size_t i = 0; i < k; ++i)
      if (detail::cr_lf_nul(q[i])) return false;
    return true;
  };
  if (n >= 8) {
    uint64_t w;
    size_t i = 0;
    for (; i + 8 < n; i += 8) {
      std::memcpy(&w, p + i, 8);
      if (detail::has_byte_below_14(w) && !bytes_ok(p + i, 8)) return false;
    }
    std::memcpy(&w, p + n - 8, 8);
    return !detail::has_byte_below_14(w) || bytes_ok(p + n - 8, 8);
  }
  if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    return !detail::has_byte_below_14(uint64_t(a) | uint64_t(b) << 32) || bytes_ok(p, n);
  }
  return bytes_ok(p, n);
}

// A value torii renders from the config (add_header, proxy_set_header)
// keeps its field when it holds line breaks: each CR and LF becomes a
// space, what RFC 9112 5.2 has a recipient do with a folded line. Values
// such as $ssl_client_cert (PEM lines joined by "\n\t") or a map value
// ending in "\n" then arrive whole on one line. A NUL still drops the field.
inline void line_breaks_to_spaces(std::string& value) {
  if (no_cr_lf_nul(value)) return;
  for (char& c : value)
    if (c == '\r' || c == '\n') c = ' ';
}

}  // namespace torii::http
