#include "modules/userid/userid.h"

#include <arpa/inet.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <ctime>

#include "config/userid_config.h"
#include "core/ascii.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/response.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/userid/uid_cookie.h"

namespace torii::userid {

namespace {

using config::UseridConfig;
using http::Exchange;

// The process's part of every identifier, as nginx's per-worker start
// value: the microseconds at start (scaled to 16 bits) and the pid. One
// sequence for all worker threads keeps identifiers unique.
uint32_t start_value() {
  static const uint32_t value = [] {
    struct timeval tv;
    ::gettimeofday(&tv, nullptr);
    return (static_cast<uint32_t>(tv.tv_usec) / 20) << 16 | (static_cast<uint32_t>(::getpid()) & 0xffff);
  }();
  return value;
}
std::atomic<uint32_t> sequence_v1{1};
std::atomic<uint32_t> sequence_v2{0x03030302};

uint32_t next_v2() {
  uint32_t cur = sequence_v2.load(std::memory_order_relaxed);
  while (true) {
    uint32_t next = cur + 0x100;
    if (next < 0x03030302) next = 0x03030302;
    if (sequence_v2.compare_exchange_weak(cur, next, std::memory_order_relaxed)) return cur;
  }
}

// The value of the cookie NAME in the Cookie fields (nginx's
// ngx_http_parse_cookie_lines: ';'-separated, name compared exactly).
const http::Header* find_cookie(const Exchange& ex, std::string_view name, std::string_view& value) {
  for (const http::Header& h : ex.req.headers) {
    if (!core::iequals(h.name, "cookie")) continue;
    std::string_view v = h.value;
    while (!v.empty()) {
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      size_t end = v.find(';');
      std::string_view item = v.substr(0, end);
      v = end == std::string_view::npos ? std::string_view() : v.substr(end + 1);
      if (item.size() > name.size() && item.substr(0, name.size()) == name && item[name.size()] == '=') {
        value = item.substr(name.size() + 1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
        return &h;
      }
    }
  }
  return nullptr;
}

UidState& state(const Exchange& ex, const UseridConfig& conf) {
  // A cache of what the request's head says, filled on first use.
  Exchange& mut = const_cast<Exchange&>(ex);
  if (mut.uid) return *mut.uid;
  mut.uid = std::make_shared<UidState>();
  UidState& st = *mut.uid;
  std::string_view value;
  const http::Header* line = find_cookie(ex, conf.name, value);
  if (line == nullptr) return st;
  st.cookie.assign(value);
  if (value.size() < 22) {
    TORII_LOG_EX(ex, error, "client sent too short userid cookie \"%.*s\"%s", static_cast<int>(line->value.size()),
              line->value.data(), http::log_context(ex).c_str());
    return st;
  }
  if (!decode_uid(value, st.got)) {
    std::memset(st.got, 0, sizeof st.got);
    TORII_LOG_EX(ex, error, "client sent invalid userid cookie \"%.*s\"%s", static_cast<int>(line->value.size()),
              line->value.data(), http::log_context(ex).c_str());
  }
  return st;
}

// $uid_reset: what a `set` wrote in this request, or its map's value;
// else empty.
std::string reset_value(const Exchange& ex, const UseridConfig& conf) {
  std::string value;
  if (conf.has_reset && !http::append_variable(conf.reset, ex, value)) value.clear();
  return value;
}

void server_word(const Exchange& ex, uint32_t& word) {
  const std::string& addr = ex.socket_conn().server_addr;
  in_addr a4;
  in6_addr a6;
  if (::inet_pton(AF_INET, addr.c_str(), &a4) == 1) {
    std::memcpy(&word, &a4, 4);  // network order, as nginx copies s_addr
  } else if (::inet_pton(AF_INET6, addr.c_str(), &a6) == 1) {
    std::memcpy(&word, a6.s6_addr + 12, 4);
  } else {
    word = 0;  // a unix socket
  }
}

void create(const Exchange& ex, const UseridConfig& conf, UidState& st) {
  if (st.created) return;
  st.created = true;
  if (st.got[3] != 0) {
    const std::string reset = reset_value(ex, conf);
    if (reset.empty() || reset == "0") {
      // A marked cookie, or marks off: nothing to set. Else set it again, marked.
      if (conf.mark == '\0' || (st.cookie.size() > 23 && st.cookie[22] == conf.mark && st.cookie[23] == '=')) return;
      std::memcpy(st.set, st.got, sizeof st.set);
      return;
    }
    st.reset = true;
    if (reset == "log") {
      char hex[40];
      std::snprintf(hex, sizeof hex, "%08X%08X%08X%08X", st.got[0], st.got[1], st.got[2], st.got[3]);
      TORII_LOG_EX(ex, notice, "userid cookie \"%s=%s\" was reset%s", conf.name.c_str(), hex, http::log_context(ex).c_str());
    }
  }
  const uint32_t now = static_cast<uint32_t>(ex.start_unix_ms > 0 ? ex.start_unix_ms / 1000 : ::time(nullptr));
  if (conf.mode == UseridConfig::Mode::v1) {
    st.set[0] = conf.service < 0 ? 0 : static_cast<uint32_t>(conf.service);
    st.set[1] = now;
    st.set[2] = start_value();
    st.set[3] = sequence_v1.fetch_add(0x100, std::memory_order_relaxed);
    return;
  }
  if (conf.service < 0) {
    server_word(ex, st.set[0]);
  } else {
    st.set[0] = htonl(static_cast<uint32_t>(conf.service));
  }
  st.set[1] = htonl(now);
  st.set[2] = htonl(start_value());
  st.set[3] = htonl(next_v2());
}

}  // namespace

void header_filter(Exchange& ex, http::ResponseHead& head) {
  const UseridConfig* conf = ex.settings().userid.get();
  if (conf == nullptr || conf->mode < UseridConfig::Mode::v1) return;
  UidState& st = state(ex, *conf);
  create(ex, *conf, st);
  if (st.set[3] == 0) return;
  std::string cookie;
  cookie.reserve(conf->name.size() + 100);
  cookie.append(conf->name).push_back('=');
  if (st.got[3] == 0 || st.reset) {
    const size_t at = cookie.size();
    encode_uid(st.set, cookie);
    if (conf->mark != '\0') cookie[at + 22] = conf->mark;
  } else {
    cookie.append(st.cookie, 0, 22);
    cookie.push_back(conf->mark);
    cookie.push_back('=');
  }
  if (conf->expires == UseridConfig::kMaxExpires) {
    cookie.append("; expires=Thu, 31-Dec-37 23:55:55 GMT");
  } else if (conf->expires != 0) {
    cookie.append("; expires=");
    append_cookie_time(::time(nullptr) + conf->expires, cookie);
  }
  cookie.append(conf->domain);
  cookie.append(conf->path);
  if (conf->flags & UseridConfig::secure) cookie.append("; secure");
  if (conf->flags & UseridConfig::httponly) cookie.append("; httponly");
  if (conf->flags & UseridConfig::samesite_strict) cookie.append("; samesite=strict");
  if (conf->flags & UseridConfig::samesite_lax) cookie.append("; samesite=lax");
  if (conf->flags & UseridConfig::samesite_none) cookie.append("; samesite=none");
  head.add("Set-Cookie", std::move(cookie));
  if (!conf->p3p.empty()) head.add("P3P", conf->p3p);
}

bool append_uid_got(const Exchange& ex, std::string& out) {
  const UseridConfig* conf = ex.settings().userid.get();
  if (conf == nullptr || conf->mode == UseridConfig::Mode::off) return false;
  const UidState& st = state(ex, *conf);
  if (st.got[3] == 0) return false;
  append_uid_text(conf->name, st.got, out);
  return true;
}

bool append_uid_set(const Exchange& ex, std::string& out) {
  const UseridConfig* conf = ex.settings().userid.get();
  if (conf == nullptr || conf->mode < UseridConfig::Mode::v1) return false;
  UidState& st = state(ex, *conf);
  create(ex, *conf, st);
  if (st.set[3] == 0) return false;
  append_uid_text(conf->name, st.set, out);
  return true;
}

}  // namespace torii::userid
