// Access logging for one worker: the location's access_log entries rendered
// with their log_format and appended to a per-worker, per-file buffer that
// is flushed when full, on its flush interval, and at exit (with gzip, each
// flush one gzip member). Each worker
// holds its own O_APPEND descriptor, so lines from workers never tear.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace torii::http {
class Exchange;
}
namespace torii::config {
struct LogBuffering;
}

namespace torii::log {

struct SyslogTarget;

// Escapes out[from..] in place as a log_format asks: JSON, or nginx's
// default \xHH for quotes, backslashes, control and non-ASCII bytes.
void escape_log_value(std::string& out, size_t from, bool json);

// An access_log whose path has variables: the line is appended to the
// file the rendered path names (relative to `prefix`), opened and closed
// each time, as nginx does without open_log_file_cache. A path that climbs
// with ".." is refused. Returns the line to log (empty when written):
// nginx logs a failed write at alert, the other failures at error.
struct NamedFileError {
  std::string text;
  bool alert = false;
};
NamedFileError append_to_named_file(std::string path, std::string_view prefix, std::string_view line);

class AccessLogWriter {
 public:
  AccessLogWriter();
  ~AccessLogWriter();  // flushes

  // Logs the exchange to every access_log of its location (none if off).
  void log(const http::Exchange& ex);
  // Appends one rendered line (newline included) to an access_log target:
  // a file (buffered, and gzipped per buffer, as the access_log says) or a
  // syslog server. The stream module's lines come this way too.
  void append_line(const std::string& path, const SyslogTarget* syslog, const config::LogBuffering& buffering,
                   std::string_view line);
  // Writes out buffers whose flush time has come (or all when `all`).
  void flush(bool all);
  // Closes and re-opens every file (SIGUSR1).
  void reopen();

 private:
  struct File;
  struct Syslog;
  std::unordered_map<std::string, std::unique_ptr<File>> files_;
  std::unordered_map<std::string, std::unique_ptr<Syslog>> syslogs_;  // by "syslog:..." as written
  std::string line_;
};

}  // namespace torii::log
