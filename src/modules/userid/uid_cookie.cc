#include "modules/userid/uid_cookie.h"

#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/base64.h"

namespace torii::userid {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

void encode_uid(const uint32_t uid[4], std::string& out) {
  unsigned char b[18] = {};
  std::memcpy(b, uid, 16);
  for (int i = 0; i < 16; i += 3) {
    const uint32_t v = uint32_t(b[i]) << 16 | uint32_t(b[i + 1]) << 8 | b[i + 2];
    out.push_back(kAlphabet[v >> 18 & 63]);
    out.push_back(kAlphabet[v >> 12 & 63]);
    if (i + 1 < 16) out.push_back(kAlphabet[v >> 6 & 63]);
    if (i + 2 < 16) out.push_back(kAlphabet[v & 63]);
  }
  out.append("==");
}

bool decode_uid(std::string_view value, uint32_t uid[4]) {
  // 22 characters carry the 16 bytes (and 4 bits nginx ignores); nginx
  // reads the first 22 and ignores what follows.
  if (value.size() < 22) return false;
  std::string raw;
  if (!core::decode_base64(value.substr(0, 22), raw) || raw.size() < 16) return false;
  std::memcpy(uid, raw.data(), 16);
  return true;
}

void append_uid_text(std::string_view name, const uint32_t uid[4], std::string& out) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "=%08X%08X%08X%08X", uid[0], uid[1], uid[2], uid[3]);
  out.append(name);
  out.append(buf);
}

void append_cookie_time(int64_t unix_seconds, std::string& out) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm;
  gmtime_r(&t, &tm);
  const int year = tm.tm_year + 1900;
  char buf[40];
  std::snprintf(buf, sizeof buf, year > 2037 ? "%s, %02d-%s-%d %02d:%02d:%02d GMT" : "%s, %02d-%s-%02d %02d:%02d:%02d GMT",
                kDays[tm.tm_wday], tm.tm_mday, kMonths[tm.tm_mon], year > 2037 ? year : year % 100, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  out.append(buf);
}

}  // namespace torii::userid
