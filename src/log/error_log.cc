#include "log/error_log.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

#include "log/server_error_logs.h"
#include "log/syslog.h"

namespace torii::log {

namespace {

using config::LogLevel;

// Writers read g_fd without a lock. Once a file has been opened, its
// descriptor number never changes and is never closed: switching or
// re-opening the log dup3()s the new file onto that number, which is atomic,
// so a writer racing a switch lands in the old file or the new one, never in
// a closed or recycled descriptor.
std::atomic<int> g_fd{STDERR_FILENO};
std::atomic<uint8_t> g_min_level{static_cast<uint8_t>(LogLevel::error)};
std::atomic<unsigned> g_next_tid{0};

std::mutex g_mu;      // serialises open/reopen
std::string g_path;   // guarded by g_mu; empty or "stderr" for fd 2
int g_owned_fd = -1;  // guarded by g_mu; the stable number once a file was opened

constexpr size_t kMaxLine = 4096;

// error_log syslog:...: one connected datagram socket for the process
// (a datagram send is atomic, so threads share it). Writers read g_syslog
// without a lock; an object once published is never freed (a reload that
// changes the target keeps the old one in g_all_syslogs), so a writer
// racing a switch sends to the old target or the new one.
struct ErrorSyslog {
  SyslogTarget target;
  std::atomic<int> fd{-1};
};
std::atomic<ErrorSyslog*> g_syslog{nullptr};
std::vector<std::unique_ptr<ErrorSyslog>> g_all_syslogs;  // guarded by g_mu

// The main context's other error_log lines: each takes the lines that
// reach its level. A set is published whole and never freed (a writer may
// still read the one a reload replaced), as the syslog targets.
struct ExtraLog {
  int fd = -1;                    // a file's stable descriptor (log/server_error_logs)
  ErrorSyslog* syslog = nullptr;  // or a syslog target
  LogLevel level = LogLevel::error;
};
using ExtraLogs = std::vector<ExtraLog>;
std::atomic<const ExtraLogs*> g_extras{nullptr};
std::vector<std::unique_ptr<ExtraLogs>> g_all_extras;  // guarded by g_mu
std::atomic<uint8_t> g_main_level{static_cast<uint8_t>(LogLevel::error)};  // the first log's own

int connect_syslog(const SyslogTarget& t) {
  int fd = ::socket(t.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&t.addr), t.addr_len) != 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// g_mu held.
void use_syslog(const std::shared_ptr<const SyslogTarget>& t) {
  if (!t) {
    g_syslog.store(nullptr, std::memory_order_release);
  } else {
    auto next = std::make_unique<ErrorSyslog>();
    next->target = *t;
    // Not there yet (a syslogd that starts later) is not an error: the
    // socket connects at the first line that finds it.
    next->fd.store(connect_syslog(next->target), std::memory_order_relaxed);
    g_syslog.store(next.get(), std::memory_order_release);
    g_all_syslogs.push_back(std::move(next));
  }
}

// LogLevel runs debug..emerg; syslog's severities run emerg (0)..debug (7).
int syslog_severity(LogLevel l) { return 7 - static_cast<int>(l); }

void send_syslog(ErrorSyslog& s, LogLevel level, std::string_view line) {
  thread_local std::string frame;
  frame.clear();
  append_syslog_header(frame, s.target, syslog_severity(level));
  frame.append(line);
  int fd = s.fd.load(std::memory_order_acquire);
  if (fd < 0) {
    std::lock_guard lock(g_mu);
    fd = s.fd.load(std::memory_order_relaxed);
    if (fd < 0) {
      fd = connect_syslog(s.target);
      s.fd.store(fd, std::memory_order_release);
    }
    if (fd < 0) return;
  }
  while (::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::notice: return "notice";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::crit: return "crit";
    case LogLevel::alert: return "alert";
    case LogLevel::emerg: return "emerg";
  }
  return "error";
}

int open_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0 && fd <= STDERR_FILENO) {
    // With a standard descriptor closed, open() can hand out 0..2; keep the
    // log off those numbers so a later dup3 never aliases stderr.
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    int saved = errno;
    ::close(fd);
    errno = saved;
    fd = moved;
  }
  return fd;
}

// Points the stable descriptor at `fd` (a new file, or stderr). g_mu held.
void install(int fd, bool owned_by_caller) {
  if (g_owned_fd < 0) {
    if (owned_by_caller) {
      g_owned_fd = fd;
      g_fd.store(fd, std::memory_order_release);
      return;
    }
    g_fd.store(fd, std::memory_order_release);  // stderr before any file: just use it
    return;
  }
  ::dup3(fd, g_owned_fd, O_CLOEXEC);
  if (owned_by_caller) ::close(fd);
  g_fd.store(g_owned_fd, std::memory_order_release);
}

bool is_stderr(const std::string& path) { return path.empty() || path == "stderr"; }

// "YYYY/MM/DD HH:MM:SS", formatted once per second per thread.
size_t append_time(char* dst) {
  struct Cache {
    time_t sec = -1;
    char text[32];
    size_t len = 0;
  };
  thread_local Cache c;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  if (ts.tv_sec != c.sec) {
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    int n = std::snprintf(c.text, sizeof c.text, "%04d/%02d/%02d %02d:%02d:%02d", (tm.tm_year + 1900) % 10000,
                          (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
                          tm.tm_sec % 100);
    c.len = n > 0 ? static_cast<size_t>(n) : 0;
    c.sec = ts.tv_sec;
  }
  std::memcpy(dst, c.text, c.len);
  return c.len;
}

}  // namespace

bool open_error_log(const config::ErrorLogConfig& cfg) {
  std::lock_guard lock(g_mu);
  if (cfg.syslog) {
    use_syslog(cfg.syslog);
  } else if (is_stderr(cfg.path)) {
    install(STDERR_FILENO, false);
  } else {
    int fd = open_file(cfg.path);
    if (fd < 0) return false;  // errno from open(); the old log stays
    install(fd, true);
  }
  if (!cfg.syslog) use_syslog(nullptr);
  g_path = cfg.path;
  uint8_t lowest = static_cast<uint8_t>(cfg.level);
  auto extras = std::make_unique<ExtraLogs>();
  for (const config::ErrorLogConfig* more = cfg.also.get(); more; more = more->also.get()) {
    ExtraLog e;
    e.level = more->level;
    if (more->syslog) {
      auto target = std::make_unique<ErrorSyslog>();
      target->target = *more->syslog;
      target->fd.store(connect_syslog(target->target), std::memory_order_relaxed);
      e.syslog = target.get();
      g_all_syslogs.push_back(std::move(target));
    } else {
      e.fd = server_error_log_fd(more->path);  // opened with the config's other logs
      if (e.fd < 0) continue;
    }
    lowest = std::min(lowest, static_cast<uint8_t>(e.level));
    extras->push_back(e);
  }
  g_extras.store(extras->empty() ? nullptr : extras.get(), std::memory_order_release);
  if (!extras->empty()) g_all_extras.push_back(std::move(extras));
  g_main_level.store(static_cast<uint8_t>(cfg.level), std::memory_order_relaxed);
  g_min_level.store(lowest, std::memory_order_relaxed);
  return true;
}

void reopen_error_log() {
  reopen_server_error_logs();
  std::lock_guard lock(g_mu);
  if (is_stderr(g_path) || g_syslog.load(std::memory_order_relaxed)) return;
  int fd = open_file(g_path);
  if (fd < 0) {
    int err = errno;
    // Keep writing to the old file, and say why in it.
    write(LogLevel::alert, "open() \"%s\" failed (%d: %s)", g_path.c_str(), err, std::strerror(err));
    return;
  }
  install(fd, true);
}

bool enabled(config::LogLevel level) {
  return static_cast<uint8_t>(level) >= g_min_level.load(std::memory_order_relaxed);
}

void write(config::LogLevel level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwrite(level, fmt, ap);
  va_end(ap);
}

namespace {

// The line without its newline, in a per-thread buffer.
size_t format_line(char* buf, config::LogLevel level, const char* fmt, va_list ap) {
  // A small number per thread, like nginx's TID, stable for the thread's life.
  thread_local const unsigned tid = g_next_tid.fetch_add(1, std::memory_order_relaxed);
  size_t n = append_time(buf);
  int m = std::snprintf(buf + n, kMaxLine - n, " [%s] %d#%u: ", level_name(level),
                        static_cast<int>(::getpid()), tid);
  if (m > 0) n += static_cast<size_t>(m);
  if (n > kMaxLine - 2) n = kMaxLine - 2;
  // Leave room for the '\n': an over-long message is cut, never split.
  m = std::vsnprintf(buf + n, kMaxLine - n - 1, fmt, ap);
  if (m > 0) n += std::min(static_cast<size_t>(m), kMaxLine - n - 2);
  return n;
}

// One write per line so threads never interleave; nothing useful can be
// done if the log itself fails, so the result is dropped.
void write_line(int fd, char* buf, size_t n) {
  buf[n++] = '\n';
  while (::write(fd, buf, n) < 0 && errno == EINTR) {
  }
}

}  // namespace

void write_to(int fd, config::LogLevel level, const char* fmt, ...) {
  const int saved_errno = errno;
  thread_local char buf[kMaxLine];
  va_list ap;
  va_start(ap, fmt);
  const size_t n = format_line(buf, level, fmt, ap);
  va_end(ap);
  write_line(fd, buf, n);
  errno = saved_errno;
}

namespace {

// One log of a block's chain takes the line: a file at its level; a syslog
// target stands for the main log (at the main log's level).
bool takes(const config::ErrorLogConfig& log, config::LogLevel level) {
  if (log.syslog) return enabled(level);
  return static_cast<uint8_t>(level) >= static_cast<uint8_t>(log.level);
}

}  // namespace

bool enabled_for(const config::ErrorLogConfig* own, config::LogLevel level) {
  if (!own) return enabled(level);
  for (const config::ErrorLogConfig* log = own; log; log = log->also.get())
    if (takes(*log, level)) return true;
  return false;
}

void write_for(const config::ErrorLogConfig* own, config::LogLevel level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int saved_errno = errno;
  thread_local char buf[kMaxLine];
  size_t n = 0;
  bool main_log = own == nullptr;
  for (const config::ErrorLogConfig* log = own; log; log = log->also.get()) {
    if (!takes(*log, level)) continue;
    // Opened when its config loaded; a file that could not be is the main log's.
    const int fd = log->syslog ? -1 : server_error_log_fd(log->path);
    if (fd < 0) {
      main_log = true;
      continue;
    }
    if (n == 0) {
      va_list copy;
      va_copy(copy, ap);
      n = format_line(buf, level, fmt, copy);
      va_end(copy);
    }
    write_line(fd, buf, n);
  }
  errno = saved_errno;
  if (main_log) vwrite(level, fmt, ap);  // once, however many logs stand for it
  errno = saved_errno;
  va_end(ap);
}

void vwrite(config::LogLevel level, const char* fmt, va_list ap) {
  if (!enabled(level)) return;  // below every log's level
  int saved_errno = errno;  // callers often log and then look at errno again
  thread_local char buf[kMaxLine];
  const size_t n = format_line(buf, level, fmt, ap);
  if (static_cast<uint8_t>(level) >= g_main_level.load(std::memory_order_relaxed)) {
    if (ErrorSyslog* s = g_syslog.load(std::memory_order_acquire)) {
      send_syslog(*s, level, std::string_view(buf, n));  // the line without its newline, as nginx
    } else {
      write_line(g_fd.load(std::memory_order_acquire), buf, n);
    }
  }
  if (const ExtraLogs* extras = g_extras.load(std::memory_order_acquire)) {
    for (const ExtraLog& e : *extras) {
      if (level < e.level) continue;
      if (e.syslog) {
        send_syslog(*e.syslog, level, std::string_view(buf, n));
      } else {
        write_line(e.fd, buf, n);
      }
    }
  }
  errno = saved_errno;
}

}  // namespace torii::log
