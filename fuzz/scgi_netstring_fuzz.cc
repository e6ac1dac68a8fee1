// libFuzzer target for the SCGI request head: any bytes parsed as a
// netstring must stay inside what was given, and pairs built from the
// input (split at zero bytes) must parse back to the same pairs after
// CONTENT_LENGTH.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "upstream/scgi/netstring.h"

namespace scgi = torii::upstream::scgi;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t consumed = 0;
  if (scgi::parse_head(in, consumed, [](std::string_view, std::string_view) {})) check(consumed <= in.size());

  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  std::string_view rest = in;
  while (!rest.empty()) {
    const size_t a = rest.find('\0');
    if (a == std::string_view::npos) break;
    const size_t b = rest.find('\0', a + 1);
    if (b == std::string_view::npos) break;
    pairs.emplace_back(rest.substr(0, a), rest.substr(a + 1, b - a - 1));
    rest.remove_prefix(b + 1);
  }
  scgi::HeadBuilder head{static_cast<int64_t>(size)};
  for (const auto& [n, v] : pairs) head.add(n, v);
  std::string out;
  head.finish(out);
  size_t i = 0;
  check(scgi::parse_head(out, consumed, [&](std::string_view n, std::string_view v) {
    if (i > 0) check(i - 1 < pairs.size() && pairs[i - 1].first == n && pairs[i - 1].second == v);
    else check(n == "CONTENT_LENGTH" && v == std::to_string(size));
    ++i;
  }));
  check(consumed == out.size() && i == pairs.size() + 1);
  return 0;
}
