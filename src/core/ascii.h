// ASCII case folding for protocol tokens (field names, content codings,
// schemes, cookie attributes): the same in every locale.
#pragma once

#include <cstddef>
#include <string_view>

namespace torii::core {

constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? char(c | 0x20) : c; }

constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

}  // namespace torii::core
