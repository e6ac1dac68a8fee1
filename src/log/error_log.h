// The error log: nginx's line format ("2026/11/29 23:00:00 [error] PID#TID:
// message"), one write(2) per line so threads never interleave, levels as
// in nginx. Process-wide; reopened on SIGUSR1 and swapped on reload.
#pragma once

#include <cstdarg>

#include "config/config.h"

namespace torii::log {

// Opens (or switches to) the log. "stderr" writes to fd 2. Safe to call while
// other threads log. Returns false with errno set if the file can't open
// (the old log stays).
bool open_error_log(const config::ErrorLogConfig& cfg);
// Re-opens the current file (after log rotation).
void reopen_error_log();

bool enabled(config::LogLevel level);
void write(config::LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void vwrite(config::LogLevel level, const char* fmt, va_list ap);

// A log of its own (stream's per-server error_log, log/server_error_logs.h):
// the same line, written to `fd`.
void write_to(int fd, config::LogLevel level, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// A request's lines (TORII_LOG_EX): to its location's error_log at that
// log's level when it has one with a file, else to the main log.
bool enabled_for(const config::ErrorLogConfig* own, config::LogLevel level);
void write_for(const config::ErrorLogConfig* own, config::LogLevel level, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace torii::log

#define TORII_LOG(level, ...)                                            \
  do {                                                                   \
    if (::torii::log::enabled(::torii::config::LogLevel::level))         \
      ::torii::log::write(::torii::config::LogLevel::level, __VA_ARGS__); \
  } while (0)
