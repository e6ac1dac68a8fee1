// The userid module's settings for one block (nginx's
// ngx_http_userid_filter_module): whether to read and set the visitor
// cookie, and the cookie's name, attributes and mark.
#pragma once

#include <cstdint>
#include <string>

#include "config/template.h"

namespace torii::config {

struct UseridConfig {
  enum class Mode : uint8_t { off, log, v1, on };
  enum Flag : uint8_t { secure = 1, httponly = 2, samesite_strict = 4, samesite_lax = 8, samesite_none = 16 };
  Mode mode = Mode::off;
  uint8_t flags = 0;       // userid_flags
  int64_t service = -1;    // userid_service; -1: the server's IPv4 address (on) or 0 (v1)
  std::string name = "uid";
  std::string domain;                  // "; domain=NAME", or empty
  std::string path = "; path=/";       // "; path=PATH"
  std::string p3p;                     // userid_p3p; empty: none
  int64_t expires = 0;                 // seconds; 0: a session cookie; kMaxExpires: "max"
  char mark = '\0';                    // userid_mark; '\0': off
  // $uid_reset: a `set` slot in every config, or a map (whose value a
  // `set` may override); `has_reset` once looked up.
  Variable reset{};
  bool has_reset = false;
  static constexpr int64_t kMaxExpires = 2145916555;  // 31 Dec 2037 23:55:55 GMT
};

}  // namespace torii::config
