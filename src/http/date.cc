#include "http/date.h"

#include <time.h>

#include <cstring>

namespace torii::http {

namespace {

constexpr char kWeekdays[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr char kMonths[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr const char* kLongWeekdays[7] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                          "Thursday", "Friday", "Saturday"};

constexpr int64_t kMaxUnix = 253402300799;  // 9999-12-31T23:59:59Z

struct Civil {
  int64_t year;
  unsigned month;  // 1..12
  unsigned day;    // 1..31
};

// Inverse of days_from_civil: the date `days` after 1970-01-01. Works in
// 400-year eras, counted from March 1st so the leap day falls last.
Civil civil_from_days(int64_t days) {
  days += 719468;  // days from 0000-03-01 to 1970-01-01
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned day_of_era = static_cast<unsigned>(days - era * 146097);
  const unsigned year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const unsigned day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const unsigned shifted_month = (5 * day_of_year + 2) / 153;  // 0 = March
  const unsigned day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
  const unsigned month = shifted_month < 10 ? shifted_month + 3 : shifted_month - 9;
  const int64_t year = static_cast<int64_t>(year_of_era) + era * 400 + (month <= 2 ? 1 : 0);
  return {year, month, day};
}

inline void put2(char* p, unsigned v) {
  p[0] = static_cast<char>('0' + v / 10 % 10);
  p[1] = static_cast<char>('0' + v % 10);
}

inline void put4(char* p, unsigned v) {
  p[0] = static_cast<char>('0' + v / 1000 % 10);
  p[1] = static_cast<char>('0' + v / 100 % 10);
  p[2] = static_cast<char>('0' + v / 10 % 10);
  p[3] = static_cast<char>('0' + v % 10);
}

bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(int64_t year, unsigned month) {
  static constexpr unsigned kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
}

// A tiny cursor over the date text; every step fails softly.
struct Cursor {
  std::string_view s;
  size_t i = 0;

  bool eat(char c) {
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  // Exactly `n` digits.
  bool digits(int n, unsigned& out) {
    unsigned v = 0;
    for (int k = 0; k < n; ++k) {
      if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + static_cast<unsigned>(s[i++] - '0');
    }
    out = v;
    return true;
  }
  // Month abbreviation, case-sensitive as the grammar says.
  bool month(unsigned& out) {
    if (s.size() - i < 3) return false;
    for (unsigned m = 0; m < 12; ++m) {
      if (std::memcmp(s.data() + i, kMonths[m], 3) == 0) {
        out = m + 1;
        i += 3;
        return true;
      }
    }
    return false;
  }
  bool time_of_day(unsigned& h, unsigned& m, unsigned& sec) {
    return digits(2, h) && eat(':') && digits(2, m) && eat(':') && digits(2, sec);
  }
  bool rest_ok() const {
    return i == s.size() || s[i] == ';' || s[i] == ' ' || s[i] == '\t';
  }
};

std::optional<int64_t> make_time(int64_t year, unsigned month, unsigned day, unsigned h,
                                 unsigned m, unsigned s) {
  // 60 would be a leap second; HTTP dates never carry one and nginx refuses it.
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || h > 23 ||
      m > 59 || s > 59)
    return std::nullopt;
  return days_from_civil(year, month, day) * 86400 + h * 3600 + m * 60 + s;
}

// Local-time fields for the log formats.
struct LocalParts {
  Civil date;
  unsigned hour, min, sec;
  long gmtoff;  // seconds east of UTC
};

LocalParts local_parts(int64_t unix_sec) {
  time_t t = static_cast<time_t>(unix_sec);
  struct tm tm {};
  localtime_r(&t, &tm);
  LocalParts p;
  p.date = {tm.tm_year + 1900LL, static_cast<unsigned>(tm.tm_mon + 1),
            static_cast<unsigned>(tm.tm_mday)};
  p.hour = static_cast<unsigned>(tm.tm_hour);
  p.min = static_cast<unsigned>(tm.tm_min);
  p.sec = static_cast<unsigned>(tm.tm_sec);
  p.gmtoff = tm.tm_gmtoff;
  return p;
}

// One second's worth of formatted text, per thread and per format.
struct SecondCache {
  int64_t second = INT64_MIN;
  char text[32];
  size_t len = 0;
};

}  // namespace

int64_t days_from_civil(int64_t year, unsigned month, unsigned day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const unsigned year_of_era = static_cast<unsigned>(year - era * 400);
  const unsigned day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + static_cast<int64_t>(day_of_era) - 719468;
}

void format_http_date(int64_t unix_sec, char* out) {
  if (unix_sec < 0) unix_sec = 0;
  if (unix_sec > kMaxUnix) unix_sec = kMaxUnix;
  const int64_t days = unix_sec / 86400;
  const unsigned secs = static_cast<unsigned>(unix_sec % 86400);
  const Civil c = civil_from_days(days);
  const unsigned weekday = static_cast<unsigned>((days + 4) % 7);  // 1970-01-01 was a Thursday
  std::memcpy(out, kWeekdays[weekday], 3);
  out[3] = ',';
  out[4] = ' ';
  put2(out + 5, c.day);
  out[7] = ' ';
  std::memcpy(out + 8, kMonths[c.month - 1], 3);
  out[11] = ' ';
  put4(out + 12, static_cast<unsigned>(c.year));
  out[16] = ' ';
  put2(out + 17, secs / 3600);
  out[19] = ':';
  put2(out + 20, secs / 60 % 60);
  out[22] = ':';
  put2(out + 23, secs % 60);
  std::memcpy(out + 25, " GMT", 4);
}

std::string format_http_date(int64_t unix_sec) {
  std::string s(kHttpDateLen, '\0');
  format_http_date(unix_sec, s.data());
  return s;
}

std::string_view cached_http_date(int64_t unix_sec) {
  thread_local SecondCache cache;
  if (cache.second != unix_sec) {
    format_http_date(unix_sec, cache.text);
    cache.len = kHttpDateLen;
    cache.second = unix_sec;
  }
  return {cache.text, cache.len};
}

std::string_view cached_mtime_date(int64_t unix_sec) {
  thread_local SecondCache cache;
  if (cache.second != unix_sec) {
    format_http_date(unix_sec, cache.text);
    cache.len = kHttpDateLen;
    cache.second = unix_sec;
  }
  return {cache.text, cache.len};
}

std::optional<int64_t> parse_http_date(std::string_view text) {
  Cursor c{text};
  // Weekday: letters up to ',' (IMF-fixdate, RFC 850) or ' ' (asctime).
  size_t wd_end = 0;
  while (wd_end < text.size() &&
         ((text[wd_end] >= 'A' && text[wd_end] <= 'Z') || (text[wd_end] >= 'a' && text[wd_end] <= 'z')))
    ++wd_end;
  const std::string_view weekday = text.substr(0, wd_end);
  bool known = false;
  bool long_form = false;
  for (int w = 0; w < 7; ++w) {
    if (weekday == kWeekdays[w]) known = true;
    if (weekday == kLongWeekdays[w]) known = long_form = true;
  }
  if (!known) return std::nullopt;
  c.i = wd_end;

  unsigned day = 0, month = 0, year = 0, h = 0, m = 0, s = 0;
  if (c.eat(',')) {
    if (!c.eat(' ')) return std::nullopt;
    if (!long_form) {
      // IMF-fixdate: "06 Nov 1994 08:49:37 GMT"
      if (!(c.digits(2, day) && c.eat(' ') && c.month(month) && c.eat(' ') && c.digits(4, year) &&
            c.eat(' ') && c.time_of_day(h, m, s) && c.eat(' ') && c.eat('G') && c.eat('M') &&
            c.eat('T') && c.rest_ok()))
        return std::nullopt;
      return make_time(year, month, day, h, m, s);
    }
    // RFC 850: "06-Nov-94 08:49:37 GMT"
    if (!(c.digits(2, day) && c.eat('-') && c.month(month) && c.eat('-') && c.digits(2, year) &&
          c.eat(' ') && c.time_of_day(h, m, s) && c.eat(' ') && c.eat('G') && c.eat('M') &&
          c.eat('T') && c.rest_ok()))
      return std::nullopt;
    year += year < 70 ? 2000 : 1900;
    return make_time(year, month, day, h, m, s);
  }
  // asctime: "Nov  6 08:49:37 1994" (day padded with a space, or two digits)
  if (long_form || !c.eat(' ') || !c.month(month) || !c.eat(' ')) return std::nullopt;
  if (c.eat(' ')) {
    if (!c.digits(1, day)) return std::nullopt;
  } else if (!c.digits(2, day)) {
    return std::nullopt;
  }
  if (!(c.eat(' ') && c.time_of_day(h, m, s) && c.eat(' ') && c.digits(4, year) && c.rest_ok()))
    return std::nullopt;
  return make_time(year, month, day, h, m, s);
}

std::string_view cached_time_local(int64_t unix_sec) {
  thread_local SecondCache cache;
  if (cache.second != unix_sec) {
    const LocalParts p = local_parts(unix_sec);
    char* o = cache.text;
    put2(o, p.date.day);  // "29/Nov/2026:23:00:00 +0000"
    o[2] = '/';
    std::memcpy(o + 3, kMonths[p.date.month - 1], 3);
    o[6] = '/';
    put4(o + 7, static_cast<unsigned>(p.date.year));
    o[11] = ':';
    put2(o + 12, p.hour);
    o[14] = ':';
    put2(o + 15, p.min);
    o[17] = ':';
    put2(o + 18, p.sec);
    o[20] = ' ';
    o[21] = p.gmtoff < 0 ? '-' : '+';
    const unsigned off = static_cast<unsigned>((p.gmtoff < 0 ? -p.gmtoff : p.gmtoff) / 60);
    put2(o + 22, off / 60);
    put2(o + 24, off % 60);
    cache.len = 26;
    cache.second = unix_sec;
  }
  return {cache.text, cache.len};
}

std::string_view cached_time_iso8601(int64_t unix_sec) {
  thread_local SecondCache cache;
  if (cache.second != unix_sec) {
    const LocalParts p = local_parts(unix_sec);
    char* o = cache.text;
    put4(o, static_cast<unsigned>(p.date.year));  // "2026-11-29T23:00:00+00:00"
    o[4] = '-';
    put2(o + 5, p.date.month);
    o[7] = '-';
    put2(o + 8, p.date.day);
    o[10] = 'T';
    put2(o + 11, p.hour);
    o[13] = ':';
    put2(o + 14, p.min);
    o[16] = ':';
    put2(o + 17, p.sec);
    o[19] = p.gmtoff < 0 ? '-' : '+';
    const unsigned off = static_cast<unsigned>((p.gmtoff < 0 ? -p.gmtoff : p.gmtoff) / 60);
    put2(o + 20, off / 60);
    o[22] = ':';
    put2(o + 23, off % 60);
    cache.len = 25;
    cache.second = unix_sec;
  }
  return {cache.text, cache.len};
}

}  // namespace torii::http
