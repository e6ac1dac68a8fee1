// Fuzzes the unescaping of `rewrite ... redirect` targets: the result is
// never longer than the input and decodes no line break (no header
// splitting through %0D%0A in a captured argument).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "modules/rewrite/redirect_unescape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string out = torii::rewrite::unescape_redirect(in);
  if (out.size() > in.size()) __builtin_trap();
  auto breaks = [](std::string_view s) { return std::count(s.begin(), s.end(), '\r') + std::count(s.begin(), s.end(), '\n'); };
  if (breaks(out) > breaks(in)) __builtin_trap();
  return 0;
}
