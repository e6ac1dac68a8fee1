#include "log/syslog.h"
#include "core/quote.h"
#include "net/address.h"

#include <errno.h>
#include <netdb.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

namespace torii::log {

namespace {

constexpr const char* kFacilities[] = {"kern",  "user",   "mail",   "daemon", "auth",   "intern",
                                       "lpr",   "news",   "uucp",   "clock",  "authpriv", "ftp",
                                       "ntp",   "audit",  "alert",  "cron",   "local0", "local1",
                                       "local2", "local3", "local4", "local5", "local6", "local7"};
// nginx's level names, not syslog's ("error", "warn").
constexpr const char* kSeverities[] = {"emerg", "alert", "crit", "error", "warn", "notice", "info", "debug"};

Result<bool> resolve_server(std::string_view text, SyslogTarget& t) {
  if (text.substr(0, 5) == "unix:") {
    std::string_view path = text.substr(5);
    if (!net::unix_address(path, t.addr, t.addr_len)) return Error{"invalid path in syslog server " + q(text)};
    return true;
  }
  std::string host;
  std::string port = "514";
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return Error{"invalid IPv6 address in syslog server " + q(text)};
    host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return Error{"invalid syslog server " + q(text)};
      port = std::string(rest.substr(1));
    }
  } else {
    size_t colon = text.rfind(':');
    host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) port = std::string(text.substr(colon + 1));
  }
  if (host.empty()) return Error{"no host in syslog server " + q(text)};
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoul(port) == 0 || std::stoul(port) > 65535)
    return Error{"invalid port in syslog server " + q(text)};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || !res)
    return Error{"host not found in syslog server " + q(text)};
  std::memcpy(&t.addr, res->ai_addr, res->ai_addrlen);
  t.addr_len = res->ai_addrlen;
  freeaddrinfo(res);
  return true;
}

const std::string& hostname() {
  static const std::string name = [] {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return std::string("localhost");
    return std::string(buf);
  }();
  return name;
}

}  // namespace

Result<SyslogTarget> parse_syslog_target(std::string_view params) {
  SyslogTarget t;
  bool server = false, facility = false, severity = false, tag = false;
  while (true) {
    size_t comma = params.find(',');
    std::string_view p = params.substr(0, comma);
    if (p.substr(0, 7) == "server=") {
      if (server) return Error{"duplicate syslog \"server\""};
      auto r = resolve_server(p.substr(7), t);
      if (!r) return Error{r.error()};
      t.server = std::string(p.substr(7));
      server = true;
    } else if (p.substr(0, 9) == "facility=") {
      if (facility) return Error{"duplicate syslog \"facility\""};
      int found = -1;
      for (int i = 0; i < int(std::size(kFacilities)); ++i)
        if (p.substr(9) == kFacilities[i]) found = i;
      if (found < 0) return Error{"unknown syslog facility " + q(p.substr(9))};
      t.facility = found;
      facility = true;
    } else if (p.substr(0, 9) == "severity=") {
      if (severity) return Error{"duplicate syslog \"severity\""};
      int found = -1;
      for (int i = 0; i < int(std::size(kSeverities)); ++i)
        if (p.substr(9) == kSeverities[i]) found = i;
      if (found < 0) return Error{"unknown syslog severity " + q(p.substr(9))};
      t.severity = found;
      severity = true;
    } else if (p.substr(0, 4) == "tag=") {
      if (tag) return Error{"duplicate syslog \"tag\""};
      std::string_view v = p.substr(4);
      // RFC 3164: at most 32 alphanumeric characters.
      if (v.size() > 32) return Error{"syslog tag length exceeds 32"};
      for (char c : v) {
        bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!ok) return Error{"syslog \"tag\" only allows alphanumeric characters and underscore"};
      }
      t.tag = std::string(v);
      tag = true;
    } else if (p == "nohostname") {
      t.nohostname = true;
    } else {
      return Error{"unknown syslog parameter " + q(p)};
    }
    if (comma == std::string_view::npos) break;
    params.remove_prefix(comma + 1);
  }
  if (!server) return Error{"no syslog server specified"};
  return t;
}

void append_syslog_header(std::string& out, const SyslogTarget& t, int severity) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  struct Cache {
    time_t sec = -1;
    char text[24];
  };
  thread_local Cache c;
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  if (ts.tv_sec != c.sec) {
    tm tm;
    localtime_r(&ts.tv_sec, &tm);
    std::snprintf(c.text, sizeof c.text, "%s %2d %02d:%02d:%02d", kMonths[tm.tm_mon % 12], tm.tm_mday % 100,
                  tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100);
    c.sec = ts.tv_sec;
  }
  char pri[16];
  std::snprintf(pri, sizeof pri, "<%d>", t.facility * 8 + severity);
  out += pri;
  out += c.text;
  out += ' ';
  if (!t.nohostname) {
    out += hostname();
    out += ' ';
  }
  out += t.tag;
  out += ": ";
}

SyslogSender::~SyslogSender() {
  if (fd_ >= 0) ::close(fd_);
}

bool SyslogSender::send(std::string_view frame) {
  if (fd_ < 0) {
    fd_ = ::socket(target_.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return false;
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&target_.addr), target_.addr_len) != 0) {
      int err = errno;
      ::close(fd_);
      fd_ = -1;
      errno = err;
      return false;
    }
  }
  ssize_t n;
  do {
    n = ::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n >= 0) return true;
  int err = errno;
  if (err == EAGAIN || err == EWOULDBLOCK) return true;  // dropped, as nginx's non-blocking send does
  // The listener went away (a restarted syslogd): reconnect next time.
  ::close(fd_);
  fd_ = -1;
  errno = err;
  return false;
}

}  // namespace torii::log
