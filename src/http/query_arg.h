// nginx's ngx_http_arg: the raw value of the first NAME=value pair of the
// query (name compared without case), as handlers read ?start and ?end.
#pragma once

#include <optional>
#include <string_view>

namespace torii::http {

inline std::optional<std::string_view> query_arg(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.size() <= name.size() || pair[name.size()] != '=') continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      char a = pair[i], b = name[i];
      if (a >= 'A' && a <= 'Z') a = char(a - 'A' + 'a');
      if (b >= 'A' && b <= 'Z') b = char(b - 'A' + 'a');
      same = a == b;
    }
    if (same) return pair.substr(name.size() + 1);
  }
  return std::nullopt;
}

}  // namespace torii::http
