#include "http/user_agent_quirks.h"

namespace torii::http {

namespace {

bool has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// nginx's "msie" flag: "MSIE " followed by at least three more characters.
bool says_msie(std::string_view ua, size_t& at) {
  at = ua.find("MSIE ");
  return at != std::string_view::npos && at + 7 < ua.size();
}

}  // namespace

bool is_msie(std::string_view ua) {
  size_t m = 0;
  return says_msie(ua, m) && !has(ua, "Opera");
}

bool is_msie6(std::string_view ua) {
  size_t m = 0;
  if (has(ua, "Opera") || !says_msie(ua, m) || ua[m + 6] != '.') return false;
  if (ua[m + 5] == '4' || ua[m + 5] == '5') return true;
  return ua[m + 5] == '6' && ua.find("SV1", m + 8) == std::string_view::npos;
}

bool is_safari(std::string_view ua) {
  size_t m = 0;
  if (has(ua, "Opera") || says_msie(ua, m)) return false;
  if (has(ua, "Gecko/") || has(ua, "Chrome/")) return false;
  return has(ua, "Safari/") && has(ua, "Mac OS X");
}

}  // namespace torii::http
