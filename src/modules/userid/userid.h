// The userid module (nginx's ngx_http_userid_filter_module): reads the
// visitor cookie ($uid_got), and with `userid on|v1` gives a visitor
// without one a new identifier in Set-Cookie ($uid_set), in nginx's bytes,
// so a cookie nginx set is read here and the other way round.
#pragma once

#include <cstdint>
#include <string>

namespace torii::http {
class Exchange;
struct ResponseHead;
}

namespace torii::userid {

// What one request learned and decided: the words of the cookie it came
// with and of the one it sets (word 3 zero: none).
struct UidState {
  uint32_t got[4] = {};
  uint32_t set[4] = {};
  std::string cookie;  // the cookie's value as sent
  bool reset = false;
  bool created = false;  // set[] was decided (create runs once)
};

// The header filter: adds Set-Cookie (and P3P) when `userid on|v1` has an
// identifier to set.
void header_filter(http::Exchange& ex, http::ResponseHead& head);

// $uid_got, $uid_set: false when there is no value.
bool append_uid_got(const http::Exchange& ex, std::string& out);
bool append_uid_set(const http::Exchange& ex, std::string& out);

}  // namespace torii::userid
