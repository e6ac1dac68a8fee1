// $upstream_response_time, $upstream_connect_time, $upstream_header_time:
// one entry per try, joined with ", ", each "SECONDS.mmm" or "-" when the
// try never got that far (nginx's formats).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace torii::upstream {

inline void append_try_time(std::string& list, int64_t ms) {
  if (!list.empty()) list += ", ";
  if (ms < 0) {
    list += '-';
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ms / 1000), static_cast<long long>(ms % 1000));
  list += buf;
}

}  // namespace torii::upstream
