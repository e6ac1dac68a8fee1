// The byte check every response field passes before a codec writes it:
// CR, LF or NUL in a name or value would split the field or end the head
// (header injection). It runs on every byte of every response head, so it
// looks at eight bytes a step.
#pragma once

#include <cstdint>
#include <cstring>
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

// No CR, LF or NUL in `s`.
inline bool no_cr_lf_nul(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (detail::has_byte_below_14(w))
      for (int i = 0; i < 8; ++i)
        if (detail::cr_lf_nul(p[i])) return false;
  }
  for (; n > 0; ++p, --n)
    if (detail::cr_lf_nul(*p)) return false;
  return true;
}

}  // namespace torii::http
