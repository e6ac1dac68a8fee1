// $upstream_response_time, $upstream_connect_time, $upstream_header_time:
// one entry per try, joined with ", ", each "SECONDS.mmm" or "-" when the
// try never got that far (nginx's formats).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace torii::upstream {

inline void append_try_time(std::string& list, int64_t ms) {
  if (!list.empty()) list += ", ";
  if (ms < 0) {
    list += '-';
    return;
  }
  // Every proxied request appends three of these: integer conversion, not
  // snprintf, whose format parsing cost more than the rest of the try.
  char buf[32];
  char* end = std::to_chars(buf, buf + 24, ms / 1000).ptr;
  const int frac = int(ms % 1000);
  *end++ = '.';
  *end++ = char('0' + frac / 100);
  *end++ = char('0' + frac / 10 % 10);
  *end++ = char('0' + frac % 10);
  list.append(buf, size_t(end - buf));
}

}  // namespace torii::upstream
