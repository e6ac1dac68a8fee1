#include "core/fixed_point.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace torii {

void append_fixed(double v, unsigned digits, std::string& out) {
  if (digits > 9) digits = 9;
  // Beyond int64's range (or not a number) there is no whole part to cut
  // off; such a value is no coordinate, so the C library's form will do.
  if (!std::isfinite(v) || std::fabs(v) >= 9.2e18) {
    char buf[512];
    const int n = std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(digits), v);
    if (n > 0) out.append(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
    return;
  }
  if (v < 0) {
    out.push_back('-');
    v = -v;
  }
  uint64_t scale = 1;
  for (unsigned i = 0; i < digits; ++i) scale *= 10;
  auto whole = static_cast<uint64_t>(static_cast<int64_t>(v));
  auto frac = static_cast<uint64_t>((v - static_cast<double>(whole)) * static_cast<double>(scale) + 0.5);
  if (frac == scale) {
    ++whole;
    frac = 0;
  }
  out.append(std::to_string(whole));
  if (digits == 0) return;
  out.push_back('.');
  const std::string f = std::to_string(frac);
  out.append(digits - std::min<size_t>(digits, f.size()), '0');
  out.append(f);
}

}  // namespace torii
