#include "modules/userid/uid_cookie.h"

#include <cstdio>
#include <cstring>
#include <ctime>

namespace torii::userid {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

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
  if (value.size() < 22) return false;
  unsigned char b[18] = {};
  size_t n = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < 22; ++i) {
    const int s = sextet(value[i]);
    if (s < 0) return false;
    acc = acc << 6 | uint32_t(s);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n < 16) b[n++] = static_cast<unsigned char>(acc >> bits & 0xff);
    }
  }
  std::memcpy(uid, b, 16);
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
