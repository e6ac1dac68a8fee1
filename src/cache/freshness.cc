#include "cache/freshness.h"

#include <cctype>
#include <string_view>

#include "config/proxy_config.h"
#include "core/ascii.h"
#include "http/date.h"

namespace torii::cache {

namespace {

using core::iequals;

bool parse_seconds(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() > 12) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Cache-Control directives of interest; false: the response must not be stored.
struct CacheControl {
  bool forbids = false;
  int64_t max_age = -1;
  int64_t s_maxage = -1;
  int64_t swr = -1;
  int64_t sie = -1;
};

void read_cache_control(std::string_view value, CacheControl& cc) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view item = trim(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
    const size_t eq = item.find('=');
    std::string_view name = trim(item.substr(0, eq));
    std::string_view arg = eq == std::string_view::npos ? std::string_view{} : trim(item.substr(eq + 1));
    if (arg.size() >= 2 && arg.front() == '"' && arg.back() == '"') arg = arg.substr(1, arg.size() - 2);
    int64_t n = 0;
    if (iequals(name, "no-cache") || iequals(name, "no-store") || iequals(name, "private")) {
      cc.forbids = true;
    } else if (iequals(name, "max-age")) {
      cc.max_age = parse_seconds(arg, n) ? n : 0;
    } else if (iequals(name, "s-maxage")) {
      cc.s_maxage = parse_seconds(arg, n) ? n : 0;
    } else if (iequals(name, "stale-while-revalidate") && parse_seconds(arg, n)) {
      cc.swr = n;
    } else if (iequals(name, "stale-if-error") && parse_seconds(arg, n)) {
      cc.sie = n;
    }
  }
}

}  // namespace

int64_t valid_for_status(const config::CacheSettings& s, int status) {
  for (const auto& v : s.valid) {
    if (v.any) return v.seconds;
    for (int code : v.codes)
      if (code == status) return v.seconds;
  }
  return 0;
}

Freshness judge(const http1::ParsedResponse& r, const config::CacheSettings& s, int64_t now_sec) {
  using namespace config;
  Freshness f;
  const uint32_t ignore = s.ignore_headers;
  bool has_x_accel = false, has_cc = false;
  int64_t x_accel_valid = 0;  // absolute; 0: none
  int64_t expires = -1;
  bool has_expires = false;
  CacheControl cc;
  for (const auto& h : r.headers) {
    if (iequals(h.name, "set-cookie")) {
      if (!(ignore & kIgnoreSetCookie)) return f;
    } else if (iequals(h.name, "vary")) {
      if (ignore & kIgnoreVary) continue;
      if (trim(h.value) == "*") return f;
      if (!f.vary.empty()) f.vary += ", ";
      f.vary.append(h.value);
    } else if (iequals(h.name, "x-accel-expires")) {
      if (ignore & kIgnoreXAccelExpires) continue;
      std::string_view v = trim(h.value);
      const bool absolute = !v.empty() && v.front() == '@';
      if (absolute) v.remove_prefix(1);
      int64_t n = 0;
      if (!parse_seconds(v, n)) continue;
      has_x_accel = true;
      x_accel_valid = n == 0 ? 0 : (absolute ? n : now_sec + n);
    } else if (iequals(h.name, "cache-control")) {
      if (ignore & kIgnoreCacheControl) continue;
      has_cc = true;
      read_cache_control(h.value, cc);
    } else if (iequals(h.name, "expires")) {
      if (ignore & kIgnoreExpires) continue;
      has_expires = true;
      auto t = http::parse_http_date(h.value);
      expires = t ? *t : 0;  // an invalid date is in the past
    } else if (iequals(h.name, "etag")) {
      f.etag.assign(h.value);
    } else if (iequals(h.name, "last-modified")) {
      if (auto t = http::parse_http_date(h.value)) f.last_modified = *t;
    }
  }
  if (f.vary.size() > 128) return f;  // nginx keeps at most this much of it
  if (has_cc) {
    // stale-while-revalidate also stands for stale-if-error when that is
    // absent, as nginx's (an update that fails may answer stale too).
    if (cc.swr >= 0) f.stale_while_revalidate = f.stale_if_error = cc.swr;
    if (cc.sie >= 0) f.stale_if_error = cc.sie;
  }
  int64_t valid = 0;
  if (has_x_accel) {
    if (x_accel_valid == 0 || x_accel_valid <= now_sec) return f;
    valid = x_accel_valid;
  } else {
    if (has_cc) {
      if (cc.forbids) return f;
      const int64_t age = cc.s_maxage >= 0 ? cc.s_maxage : cc.max_age;
      if (age == 0) return f;
      if (age > 0) valid = now_sec + age;
    }
    if (valid == 0 && has_expires) {
      if (expires <= now_sec) return f;
      valid = expires;
    }
  }
  if (valid == 0) {
    const int64_t seconds = valid_for_status(s, r.status);
    if (seconds <= 0) return f;
    valid = now_sec + seconds;
  }
  // Validators are kept only for a 200 (nginx: 200 and 206).
  if (r.status != 200) {
    f.etag.clear();
    f.last_modified = -1;
  }
  f.cacheable = true;
  f.valid_sec = valid;
  return f;
}

}  // namespace torii::cache
