#include "log/access_log.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "config/config.h"
#include "http/document_root.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "log/json_escape.h"
#include "log/syslog.h"
#include "modules/compression/whole_gzip.h"
#include "modules/geoip2/variable.h"
#include "modules/metrics/worker_metrics.h"

namespace torii::log {

namespace {

using Clock = std::chrono::steady_clock;

// escape=default, as nginx: '"', '\\', control bytes and every byte from
// 0x7f up become \xHH, so a line stays one printable line whatever the
// client sent.
bool needs_default_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x7f; }

void append_default_escaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (!needs_default_escape(c)) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    char esc[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 0xf]};
    out.append(esc, sizeof esc);
  }
  out.append(s.data() + run, s.size() - run);
}

// Escapes out[from..] in place. Most values need nothing, so only the tail
// from the first byte that needs escaping is copied out and back.
void escape_tail(std::string& out, size_t from, bool json) {
  size_t i = from;
  if (json) {
    while (i < out.size() && !json_escapes(static_cast<unsigned char>(out[i]))) ++i;
  } else {
    while (i < out.size() && !needs_default_escape(static_cast<unsigned char>(out[i]))) ++i;
  }
  if (i == out.size()) return;
  thread_local std::string scratch;
  scratch.assign(out, i, std::string::npos);
  out.resize(i);
  if (json)
    append_json_escaped(out, scratch);
  else
    append_default_escaped(out, scratch);
}

}  // namespace

void escape_log_value(std::string& out, size_t from, bool json) { escape_tail(out, from, json); }

NamedFileError append_to_named_file(std::string path, std::string_view prefix, std::string_view line) {
  if (!path.empty() && path[0] != '/') path.insert(0, prefix);
  // A value from the client must not climb out of the folder it names.
  if (path.empty() || path.find('\0') != std::string::npos || path.find("/../") != std::string::npos ||
      path.ends_with("/.."))
    return {"invalid access log path \"" + path + "\""};
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return {"open() \"" + path + "\" failed (" + std::to_string(errno) + ": " + std::strerror(errno) + ")"};
  NamedFileError error;
  if (::write(fd, line.data(), line.size()) < 0)
    error = {"write() to \"" + path + "\" failed (" + std::to_string(errno) + ": " + std::strerror(errno) + ")", true};
  ::close(fd);
  return error;
}

namespace {

void render_line(const config::LogFormat& fmt, const http::Exchange& ex, std::string& out) {
  for (const config::TemplatePart& p : fmt.format.parts) {
    if (!p.is_variable) {
      out.append(p.literal);  // literals are the admin's text: never escaped
      continue;
    }
    size_t mark = out.size();
    if (!http::append_variable(p.variable, ex, out)) {
      out.resize(mark);
      // nginx writes "-" for a value that is not there, except in JSON,
      // where "-" would read as data, and with escape=none (nothing).
      if (!fmt.json_escape && !fmt.escape_none) out.push_back('-');
      continue;
    }
    if (!fmt.escape_none) escape_tail(out, mark, fmt.json_escape);
  }
}

// access_log with variables in its path: as nginx, nothing is written
// while the request's document root does not exist (so `$host` cannot make
// files for hosts that have no site), and the file is opened per line.
void write_to_rendered_path(const config::Template& path_template, const http::Exchange& ex, std::string_view line) {
  std::string root;
  http::append_document_root(ex, root);
  struct stat st {};
  if (root.empty() || ::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    TORII_LOG_EX(ex, error, "testing \"%s\" existence failed (%d: %s)%s", root.c_str(), errno, std::strerror(errno),
              http::log_context(ex).c_str());
    return;
  }
  const NamedFileError failed =
      append_to_named_file(http::render(path_template, ex), ex.config ? ex.config->prefix : "", line);
  if (failed.alert)
    TORII_LOG(alert, "%s", failed.text.c_str());
  else if (!failed.text.empty())
    TORII_LOG_EX(ex, error, "%s%s", failed.text.c_str(), http::log_context(ex).c_str());
}

// access_log ... if=COND: nginx skips the line when COND is empty or "0".
bool condition_holds(const config::Template& cond, const http::Exchange& ex) {
  thread_local std::string value;
  value.clear();
  http::render(cond, ex, value);
  return !value.empty() && value != "0";
}

}  // namespace

// One worker's socket to one syslog target, and the frame it builds.
struct AccessLogWriter::Syslog {
  explicit Syslog(const SyslogTarget& t) : sender(t) {}
  SyslogSender sender;
  std::string frame;
  bool failed = false;  // reported once until a send succeeds again

  void send(std::string_view line) {
    frame.clear();
    append_syslog_header(frame, sender.target(), sender.target().severity);
    frame.append(line);
    if (sender.send(frame)) {
      failed = false;
      return;
    }
    if (!failed) {
      int err = errno;
      TORII_LOG(alert, "send() to syslog server \"%s\" failed (%d: %s)", sender.target().server.c_str(), err,
                std::strerror(err));
    }
    failed = true;
  }
};

struct AccessLogWriter::File {
  std::string path;
  int fd = -1;
  bool open_failed = false;   // reported once; lines are dropped until reopen()
  bool write_failed = false;  // reported once until a write succeeds again
  config::LogBuffering buffering;
  std::string buf;
  std::string gzipped;  // the buffer as one gzip member, when gzip is on
  Clock::time_point first_buffered{};

  bool open() {
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      open_failed = false;
      return true;
    }
    if (!open_failed) {
      int err = errno;
      TORII_LOG(error, "open() \"%s\" failed (%d: %s)", path.c_str(), err, std::strerror(err));
    }
    open_failed = true;
    return false;
  }

  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  void write_out(std::string_view data) {
    if (fd < 0) return;
    // O_APPEND on a regular file writes it all at once; the loop is for
    // pipes and terminals (/dev/stdout), which may take it in parts.
    while (!data.empty()) {
      ssize_t n = ::write(fd, data.data(), data.size());
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (!write_failed) {
        int err = n < 0 ? errno : EIO;
        TORII_LOG(error, "write() to \"%s\" failed (%d: %s)", path.c_str(), err, std::strerror(err));
      }
      write_failed = true;
      return;
    }
    write_failed = false;
  }

  // Plain, or as one complete gzip member (nginx compresses each buffer
  // on its own, so the file is a series of members that zcat reads whole).
  void write_block(std::string_view data) {
    if (!buffering.gzip_level) {
      write_out(data);
      return;
    }
    gzipped.clear();
    if (!compression::gzip_whole(buffering.gzip_level, data, gzipped)) {
      TORII_LOG(alert, "gzip of %zu bytes for \"%s\" failed, lines lost", data.size(), path.c_str());
      return;
    }
    write_out(gzipped);
  }

  void flush() {
    if (buf.empty()) return;
    write_block(buf);
    buf.clear();
  }

  void add(std::string_view line) {
    if (fd < 0 && (open_failed || !open())) return;
    if (buffering.size == 0) {
      write_out(line);
      return;
    }
    if (buf.size() + line.size() > buffering.size) flush();
    if (line.size() > buffering.size) {
      write_block(line);
      return;
    }
    if (buf.empty()) {
      buf.reserve(buffering.size);
      first_buffered = Clock::now();
    }
    buf.append(line);
  }
};

AccessLogWriter::AccessLogWriter() = default;

AccessLogWriter::~AccessLogWriter() {
  flush(true);
  for (auto& [path, f] : files_) f->close();
}

void AccessLogWriter::log(const http::Exchange& ex) {
  metrics::record_request(ex);  // the log phase counts every request, logged or not
  geoip2::after_request(ex);    // and is when auto_reload looks at the files again
  if (!ex.location && !ex.server) return;
  const config::LocationSettings& s = ex.settings();
  if (s.access_log_off || s.access_logs.empty()) return;
  const config::LogFormat* rendered = nullptr;
  for (const config::AccessLog& al : s.access_logs) {
    if (!al.format) continue;
    if (al.condition && !condition_holds(*al.condition, ex)) continue;
    // Several files with one format (a common setup) share one rendering.
    if (al.format.get() != rendered) {
      line_.clear();
      render_line(*al.format, ex, line_);
      line_.push_back('\n');
      rendered = al.format.get();
    }
    if (!al.path_template.empty()) {
      write_to_rendered_path(al.path_template, ex, line_);
      continue;
    }
    append_line(al.path, al.syslog.get(), al.buffering, line_);
  }
}

void AccessLogWriter::append_line(const std::string& path, const SyslogTarget* syslog,
                                  const config::LogBuffering& buffering, std::string_view line) {
  if (syslog) {
    // One datagram per line, without the newline; not buffered (nginx
    // sends each line at once too). Keyed by the target as written.
    auto it = syslogs_.find(path);
    if (it == syslogs_.end()) it = syslogs_.emplace(path, std::make_unique<Syslog>(*syslog)).first;
    it->second->send(line.substr(0, line.size() - 1));
    return;
  }
  auto it = files_.find(path);
  if (it == files_.end()) {
    auto f = std::make_unique<File>();
    f->path = path;
    it = files_.emplace(path, std::move(f)).first;
  }
  File& f = *it->second;
  // The latest config wins when a reload changed the buffering.
  if (!(f.buffering == buffering)) {
    f.flush();
    f.buffering = buffering;
  }
  f.add(line);
}

void AccessLogWriter::flush(bool all) {
  Clock::time_point now = all ? Clock::time_point{} : Clock::now();
  for (auto& [path, f] : files_) {
    if (f->buf.empty()) continue;
    const config::Ms every = f->buffering.flush;
    if (all || (every.count() > 0 && now - f->first_buffered >= every)) f->flush();
  }
}

void AccessLogWriter::reopen() {
  for (auto& [path, f] : files_) {
    f->flush();
    f->close();
    f->open_failed = false;
    f->open();  // at once, so the new file exists even before the next line
  }
}

}  // namespace torii::log
