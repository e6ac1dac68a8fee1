#include "modules/rewrite/runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "handlers/symlink_policy.h"
#include "http/exchange.h"
#include "modules/rewrite/redirect_unescape.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/special_response.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/limit_rate/limit_rate.h"
#include "modules/rewrite/program.h"

namespace torii::rewrite {

void set_slot(http::Exchange& ex, uint32_t slot, std::string_view value) {
  if (ex.variables.size() <= slot) {
    size_t want = ex.config ? ex.config->variables.size() : 0;
    ex.variables.resize(want > slot ? want : slot + 1);
  }
  auto& v = ex.variables[slot];
  v.value.assign(value);
  v.set = true;
}

void set_args(http::Exchange& ex, std::string args) {
  ex.redirect_args = std::move(args);
  ex.req.query = ex.redirect_args;
  ex.req.has_query = !ex.redirect_args.empty();
}

namespace {

using http::Exchange;

// Characters nginx escapes in a capture copied into arguments
// (ngx_escape_uri's NGX_ESCAPE_ARGS): controls, space, " # % & + ; < > ?
// \ ^ ` { | } and everything from 0x7f.
bool args_unsafe(unsigned char c) {
  if (c <= 0x20 || c >= 0x7f) return true;
  switch (c) {
    case '"': case '#': case '%': case '&': case '+': case ';': case '<': case '>': case '?':
    case '\\': case '^': case '`': case '{': case '|': case '}':
      return true;
    default:
      return false;
  }
}

void append_escaped_capture(std::string& out, std::string_view v) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : v) {
    if (args_unsafe(c)) {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
}

// Renders a replacement. With `quote`, captures are escaped as nginx does
// when the request's URI came percent-encoded or with a '+' (so a decoded
// "%26" does not turn into an argument separator).
void render_replacement(const config::Template& t, const Exchange& ex, std::string& out, bool quote) {
  for (const config::TemplatePart& p : t.parts) {
    if (!p.is_variable) {
      out.append(p.literal);
      continue;
    }
    if (!quote || p.variable.id != config::VarId::capture) {
      http::append_variable(p.variable, ex, out);
      continue;
    }
    thread_local std::string capture;
    capture.clear();
    http::append_variable(p.variable, ex, capture);
    append_escaped_capture(out, capture);
  }
}

bool quoted_uri(const Exchange& ex) { return ex.req.raw_path.find_first_of("%+") != std::string_view::npos; }

struct Run {
  Exchange& ex;
  bool log;                  // rewrite_log of the block the program started in
  bool quote;                // captures in `set` values are escaped until a rewrite matched (nginx's e->quote)
  bool uri_changed = false;
};

bool match(Run& r, const config::Regex& re, std::string_view subject) {
  Exchange& ex = r.ex;
  bool ok = re.capture_count() > 0 ? re.match(subject, &ex.captures) : re.match(subject, nullptr);
  if (ok && re.capture_count() == 0) ex.captures.spans.clear();  // as nginx: a match without groups empties $1..$9
  if (r.log) {
    TORII_LOG_EX(ex, notice, "\"%s\" %s \"%.*s\"%s", re.pattern().c_str(), ok ? "matches" : "does not match",
              static_cast<int>(subject.size()), subject.data(), http::log_context(ex).c_str());
  }
  if (!ok) {
    ex.captures.spans.clear();  // a failed match empties $1..$9
    return false;
  }
  if (!re.named().empty()) assign_named_captures(re, ex);
  return true;
}

// stat() of `path`, or, under disable_symlinks, an fstat() of it opened
// by the policy's walk (as nginx's file tests do). "" or the call that failed.
const char* stat_under_policy(const Exchange& ex, const std::string& path, struct stat& st) {
  const handlers::SymlinkPolicy policy = handlers::symlink_policy(ex, path);
  if (policy.mode == handlers::SymlinkPolicy::Mode::off) return ::stat(path.c_str(), &st) == 0 ? "" : "stat()";
  const int fd = handlers::open_with_policy(path, O_RDONLY | O_NONBLOCK, policy);
  if (fd < 0) return "openat()";
  const bool ok = ::fstat(fd, &st) == 0;
  const int err = errno;
  ::close(fd);
  errno = err;
  return ok ? "" : "fstat()";
}

bool file_test(const Exchange& ex, const Condition& c, const std::string& path) {
  struct stat st;
  if (const char* failed = stat_under_policy(ex, path, st); *failed != '\0') {
    if (errno != ENOENT && errno != ENOTDIR && errno != ENAMETOOLONG) {
      int err = errno;
      TORII_LOG_EX(ex, crit, "%s \"%s\" failed (%d: %s)%s", failed, path.c_str(), err, std::strerror(err),
                http::log_context(ex).c_str());
    }
    return c.negate;
  }
  bool yes = false;
  switch (c.kind) {
    case Condition::Kind::file: yes = S_ISREG(st.st_mode); break;
    case Condition::Kind::directory: yes = S_ISDIR(st.st_mode); break;
    case Condition::Kind::exists: yes = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode); break;
    default: yes = (st.st_mode & S_IXUSR) != 0; break;
  }
  return yes != c.negate;
}

bool test(Run& r, const Condition& c) {
  thread_local std::string subject;
  subject.clear();
  http::render(c.subject, r.ex, subject);
  switch (c.kind) {
    case Condition::Kind::value:
      return !subject.empty() && subject != "0";
    case Condition::Kind::equal: {
      thread_local std::string operand;
      operand.clear();
      render_replacement(c.operand, r.ex, operand, r.quote);
      return (subject == operand) != c.negate;
    }
    case Condition::Kind::regex:
      return match(r, *c.regex, subject) != c.negate;
    default:
      return file_test(r.ex, c, subject);
  }
}

enum class Next : uint8_t { go_on, stop, responded };

Next run_rewrite(Run& r, const RewriteStep& s) {
  Exchange& ex = r.ex;
  if (!match(r, *s.regex, ex.req.path)) return Next::go_on;
  r.quote = false;
  bool quote = quoted_uri(ex);
  std::string uri;
  render_replacement(s.path, ex, uri, s.redirect && quote);
  if (s.redirect) {
    uri = unescape_redirect(uri);
    if (s.add_args && !ex.req.query.empty()) {
      uri.push_back(s.has_args ? '&' : '?');
      uri.append(ex.req.query);
    }
    if (r.log) TORII_LOG_EX(ex, notice, "rewritten redirect: \"%s\"%s", uri.c_str(), http::log_context(ex).c_str());
    ex.response.set("Location", http::absolute_location(ex, uri));
    http::send_error(ex, s.status);
    return Next::responded;
  }
  if (s.has_args) {
    std::string args;
    render_replacement(s.args, ex, args, quote);
    if (s.add_args && !ex.req.query.empty()) {
      args.push_back('&');
      args.append(ex.req.query);
    }
    set_args(ex, std::move(args));
  } else if (!s.add_args) {
    set_args(ex, std::string());
  }
  if (r.log) {
    TORII_LOG_EX(ex, notice, "rewritten data: \"%s\", args: \"%.*s\"%s", uri.c_str(), static_cast<int>(ex.req.query.size()),
              ex.req.query.data(), http::log_context(ex).c_str());
  }
  if (uri.empty()) {
    TORII_LOG_EX(ex, error, "the rewritten URI has a zero length%s", http::log_context(ex).c_str());
    http::send_error(ex, 500);
    return Next::responded;
  }
  ex.req.path = std::move(uri);
  ex.is_internal = true;
  ex.request_filename.clear();  // it named the file of the old URI
  r.uri_changed = !s.break_cycle;
  if (s.break_cycle) ex.location_uri_rewritten = true;
  return s.stop ? Next::stop : Next::go_on;
}

Outcome run(Exchange& ex, const Program& program) {
  Run r{ex, ex.settings().rewrite_log, quoted_uri(ex)};
  const size_t n = program.steps.size();
  size_t i = 0;
  while (i < n) {
    const Step& step = program.steps[i++];
    if (const auto* s = std::get_if<SetStep>(&step)) {
      thread_local std::string value;
      value.clear();
      render_replacement(s->value, ex, value, r.quote);
      if (s->args) {
        set_args(ex, value);
      } else if (s->limit_rate) {
        limits::set_limit_rate(ex, value);
      } else {
        set_slot(ex, s->slot, value);
      }
    } else if (const auto* s = std::get_if<IfStep>(&step)) {
      if (test(r, s->condition)) {
        if (s->settings) ex.location = s->settings.get();  // its settings from here on, as nginx's
      } else {
        i += s->body;
      }
    } else if (const auto* s = std::get_if<RewriteStep>(&step)) {
      Next next = run_rewrite(r, *s);
      if (next == Next::responded) return Outcome::responded;
      if (next == Next::stop) break;
    } else if (const auto* s = std::get_if<ReturnStep>(&step)) {
      http::send_return(ex, s->ret);
      return Outcome::responded;
    } else {  // break
      if (r.uri_changed) ex.location_uri_rewritten = true;  // the new URI stays here
      r.uri_changed = false;
      break;
    }
  }
  return r.uri_changed ? Outcome::uri_changed : Outcome::proceed;
}

}  // namespace

Outcome run_server(Exchange& ex) {
  if (!ex.server || !ex.server->rewrite) return Outcome::proceed;
  // A new URI here is simply the one the location is chosen for.
  Outcome o = run(ex, *ex.server->rewrite);
  return o == Outcome::uri_changed ? Outcome::proceed : o;
}

Outcome run_location(Exchange& ex) {
  // No location matched: the server's steps already ran (nginx skips them here).
  if (!ex.location || !ex.location->settings.rewrite) {
    ex.location_uri_rewritten = false;
    return Outcome::proceed;
  }
  ex.location_uri_rewritten = false;
  const Program& program = *ex.location->settings.rewrite;
  return run(ex, program);
}

void assign_named_captures(const config::Regex& re, Exchange& ex) {
  for (const auto& [group, slot] : re.named()) set_slot(ex, slot, ex.captures.get(static_cast<size_t>(group)));
}

}  // namespace torii::rewrite
