#include "config/directives.h"
#include "core/ascii.h"
#include "core/quote.h"
#include "config/expires.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <thread>

#include "config/regex.h"
#include "log/syslog.h"
#include "net/address.h"

namespace torii::config {

Error invalid_value(const Node& n, std::string_view value) {
  return node_error(n, "invalid value " + q(value) + " in " + q(n.name) + " directive");
}

namespace {

Error not_yet(const Node& n, std::string_view what) {
  return node_error(n, q(what) + " is not yet supported");
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

Result<Template> template_arg(const Node& n, std::string_view text) {
  auto t = compile_template(text);
  if (!t) return node_error(n, t.error());
  return t;
}

// ---- generic setters -------------------------------------------------------

template <bool LocationSettings::*F>
Status loc_flag(Compiler&, Scope& s, const Node& n) {
  s.settings->*F = n.args[0] == "on";
  return Ok{};
}

template <bool Server::*F>
Status srv_flag(Compiler&, Scope& s, const Node& n) {
  s.server->*F = n.args[0] == "on";
  return Ok{};
}

template <Ms LocationSettings::*F>
Status loc_time(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  s.settings->*F = Ms(ms);
  return Ok{};
}

template <Ms Server::*F>
Status srv_time(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  s.server->*F = Ms(ms);
  return Ok{};
}

template <typename T, T LocationSettings::*F>
Status loc_size(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  s.settings->*F = static_cast<T>(v);
  return Ok{};
}

Status accept_size(Compiler&, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  return Ok{};
}

// ---- main and events -------------------------------------------------------

Status set_worker_processes(Compiler& c, Scope&, const Node& n) {
  if (n.args[0] == "auto") {
    unsigned hc = std::thread::hardware_concurrency();
    c.cfg().worker_processes = hc ? static_cast<int>(hc) : 1;
    return Ok{};
  }
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v == 0 || v > 4096) return invalid_value(n, n.args[0]);
  c.cfg().worker_processes = static_cast<int>(v);
  return Ok{};
}

Status set_rlimit_nofile(Compiler& c, Scope&, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v)) return invalid_value(n, n.args[0]);
  c.cfg().worker_rlimit_nofile = v;
  return Ok{};
}

Status set_pid(Compiler& c, Scope&, const Node& n) {
  c.cfg().pid_path = c.full_path(n.args[0]);
  return Ok{};
}

Status set_user(Compiler& c, Scope&, const Node& n) {
  c.cfg().user = n.args[0];
  if (::geteuid() != 0) {
    c.warn(n, "the \"user\" directive makes sense only if the master process runs with "
              "super-user privileges, ignored");
  }
  return Ok{};
}

bool parse_level(std::string_view s, LogLevel& out) {
  static constexpr std::string_view kNames[] = {"debug", "info",  "notice", "warn",
                                                "error", "crit",  "alert",  "emerg"};
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (kNames[i] == s) {
      out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

void note_error_log_file(Config& cfg, const std::string& path) {
  auto& files = cfg.error_log_files;
  if (std::find(files.begin(), files.end(), path) == files.end()) files.push_back(path);
}

Status set_error_log(Compiler& c, Scope& s, const Node& n) {
  const std::string& path = n.args[0];
  if (starts_with(path, "memory:")) return not_yet(n, path);
  ErrorLogConfig el;
  if (starts_with(path, "syslog:")) {
    auto target = log::parse_syslog_target(std::string_view(path).substr(7));
    if (!target) return node_error(n, target.error());
    el.syslog = std::make_shared<const log::SyslogTarget>(std::move(*target));
    el.path = path;
  } else {
    el.path = path == "stderr" ? path : c.full_path(path);
  }
  if (n.args.size() == 2 && !parse_level(n.args[1], el.level)) return invalid_value(n, n.args[1]);
  if (s.ctx == kMain) {
    // A second line joins the first (both get the lines that reach their
    // levels, as nginx); its file is made and checked with the others.
    if (s.error_log_here) {
      if (!el.syslog) note_error_log_file(c.cfg(), el.path);
      el.also = std::make_shared<const ErrorLogConfig>(std::move(c.cfg().error_log));
    }
    s.error_log_here = true;
    c.cfg().error_log = std::move(el);
    return Ok{};
  }
  // A request's messages go to its location's log, whose file is opened
  // once the config has loaded (log::open_request_error_logs).
  if (!el.syslog) note_error_log_file(c.cfg(), el.path);
  if (s.error_log_here && s.settings->error_log)
    el.also = std::make_shared<const ErrorLogConfig>(std::move(*s.settings->error_log));
  s.error_log_here = true;
  s.settings->error_log = std::move(el);
  return Ok{};
}

Status set_events(Compiler& c, Scope&, const Node& n) {
  Scope inner;
  inner.ctx = kEvents;
  return c.block(n.children, inner);
}

Status set_worker_connections(Compiler& c, Scope&, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v == 0 || v > std::numeric_limits<unsigned>::max())
    return invalid_value(n, n.args[0]);
  c.cfg().worker_connections = static_cast<unsigned>(v);
  return Ok{};
}

// torii always runs in the foreground as one process of worker threads, so
// nginx's process-model switches are accepted; "daemon on" is warned about.
Status set_daemon(Compiler& c, Scope&, const Node& n) {
  if (n.args[0] == "on") c.warn(n, "torii runs in the foreground; \"daemon on\" is ignored (use a service manager)");
  return Ok{};
}

Status accept_flag(Compiler&, Scope&, const Node&) { return Ok{}; }

Status set_multi_accept(Compiler& c, Scope&, const Node& n) {
  c.cfg().multi_accept = n.args[0] == "on";
  return Ok{};
}

Status set_use(Compiler&, Scope&, const Node& n) {
  if (n.args[0] != "epoll") return invalid_value(n, n.args[0]);
  return Ok{};
}

Status set_http(Compiler& c, Scope&, const Node& n) { return c.http(n); }

// ---- http ------------------------------------------------------------------

// The first `types` in a block replaces the inherited table; a later one in
// the same block adds to it (a repeated extension takes the later type, with
// nginx's warning: Compiler::block), so `include mime.types; types { ... }`
// keeps every type.
Status set_types(Compiler& c, Scope& s, const Node& n) {
  if (!s.types_here) s.types_here = std::make_shared<MimeTypes>();
  Scope inner;
  inner.ctx = kTypes;
  inner.types = s.types_here.get();
  auto st = c.block(n.children, inner);
  if (!st) return st;
  s.settings->types = s.types_here;
  return Ok{};
}

Status set_default_type(Compiler&, Scope& s, const Node& n) {
  s.settings->default_type = n.args[0];
  return Ok{};
}

Status set_keepalive_timeout(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  s.settings->keepalive_timeout = Ms(ms);
  s.settings->keepalive_header = Ms(0);
  if (n.args.size() == 2) {
    int64_t hdr = 0;
    if (!parse_time_ms(n.args[1], hdr)) return invalid_value(n, n.args[1]);
    s.settings->keepalive_header = Ms(hdr);
  }
  return Ok{};
}

Status set_keepalive_requests(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v)) return invalid_value(n, n.args[0]);
  s.settings->keepalive_requests = v;
  return Ok{};
}

Status set_open_file_cache(Compiler&, Scope& s, const Node& n) {
  OpenFileCache& ofc = s.settings->open_file_cache;
  if (n.args[0] == "off") {
    if (n.args.size() != 1) return invalid_value(n, n.args[1]);
    ofc.enabled = false;
    return Ok{};
  }
  bool have_max = false;
  for (const auto& a : n.args) {
    if (starts_with(a, "max=")) {
      uint64_t v = 0;
      if (!parse_number(std::string_view(a).substr(4), v) || v == 0) return invalid_value(n, a);
      ofc.max = v;
      have_max = true;
    } else if (starts_with(a, "inactive=")) {
      int64_t ms = 0;
      if (!parse_time_ms(std::string_view(a).substr(9), ms)) return invalid_value(n, a);
      ofc.inactive = Ms(ms);
    } else {
      return invalid_value(n, a);
    }
  }
  if (!have_max) return node_error(n, "\"open_file_cache\" must have the \"max\" parameter");
  ofc.enabled = true;
  return Ok{};
}

Status set_ofc_valid(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  s.settings->open_file_cache.valid = Ms(ms);
  return Ok{};
}

Status set_ofc_min_uses(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > std::numeric_limits<unsigned>::max())
    return invalid_value(n, n.args[0]);
  s.settings->open_file_cache.min_uses = static_cast<unsigned>(v);
  return Ok{};
}

Status set_ofc_errors(Compiler&, Scope& s, const Node& n) {
  s.settings->open_file_cache.errors = n.args[0] == "on";
  return Ok{};
}

Status set_server_tokens(Compiler&, Scope& s, const Node& n) {
  const auto& v = n.args[0];
  if (v == "on" || v == "build") {
    s.settings->server_tokens = true;
  } else if (v == "off") {
    s.settings->server_tokens = false;
  } else {
    return invalid_value(n, v);
  }
  return Ok{};
}

}  // namespace

Result<AccessRule> parse_access_rule(Compiler& c, const Node& n, const std::string& text, bool allow) {
  AccessRule r;
  r.allow = allow;
  std::string v = text;
  if (v == "all") {
    r.all = true;
    return r;
  }
  if (v == "unix:") {
    r.family = AF_UNIX;  // every client of a `listen unix:` socket (masks zero: all match)
    return r;
  }
  int bits = -1;
  size_t slash = v.find('/');
  if (slash != std::string::npos) {
    uint64_t b = 0;
    if (!parse_number(std::string_view(v).substr(slash + 1), b) || b > 128) return invalid_value(n, v);
    bits = static_cast<int>(b);
    v.resize(slash);
  }
  size_t len = 0;
  if (inet_pton(AF_INET, v.c_str(), r.addr) == 1) {
    r.family = AF_INET;
    len = 4;
  } else if (inet_pton(AF_INET6, v.c_str(), r.addr) == 1) {
    r.family = AF_INET6;
    len = 16;
  } else {
    return invalid_value(n, text);
  }
  if (bits < 0) bits = static_cast<int>(len * 8);
  if (static_cast<size_t>(bits) > len * 8) return invalid_value(n, text);
  for (size_t i = 0; i < len; ++i) {
    int b = std::min(8, std::max(0, bits - static_cast<int>(i * 8)));
    r.mask[i] = static_cast<uint8_t>(b == 0 ? 0 : 0xff << (8 - b));
  }
  bool meaningless = false;
  for (size_t i = 0; i < len; ++i) {
    if (r.addr[i] & ~r.mask[i]) meaningless = true;
    r.addr[i] &= r.mask[i];
  }
  if (meaningless) c.warn(n, "low address bits of " + q(text) + " are meaningless");
  return r;
}

std::optional<Status> parse_log_buffering(const Node& n, std::string_view a, LogBuffering& b) {
  if (starts_with(a, "buffer=")) {
    int64_t v = 0;
    if (!parse_size(a.substr(7), v) || v <= 0) return node_error(n, "invalid buffer size " + q(a.substr(7)));
    b.size = size_t(v);
  } else if (starts_with(a, "flush=")) {
    int64_t ms = 0;
    if (!parse_time_ms(a.substr(6), ms) || ms == 0) return node_error(n, "invalid flush time " + q(a.substr(6)));
    b.flush = Ms(ms);
  } else if (a == "gzip") {
    b.gzip_level = 1;  // zlib's Z_BEST_SPEED, nginx's default
  } else if (starts_with(a, "gzip=")) {
    uint64_t level = 0;
    if (!parse_number(a.substr(5), level) || level < 1 || level > 9)
      return node_error(n, "invalid compression level " + q(a.substr(5)));
    b.gzip_level = int(level);
  } else {
    return std::nullopt;
  }
  return Ok{};
}

Status finish_log_buffering(const Node& n, LogBuffering& b, bool syslog) {
  if (b.gzip_level && !b.size) b.size = 64 * 1024;
  if (b.flush.count() && !b.size) return node_error(n, "no buffer is defined for access_log " + q(n.args[0]));
  if (b.size && syslog) return node_error(n, "logs to syslog cannot be buffered");
  return Ok{};
}

void note_access_log_file(Config& cfg, const std::string& path) {
  auto& files = cfg.access_log_files;
  if (std::find(files.begin(), files.end(), path) == files.end()) files.push_back(path);
}

namespace {

Status set_access_log(Compiler& c, Scope& s, const Node& n) {
  LocationSettings& ls = *s.settings;
  if (!s.access_log_here) {
    ls.access_logs.clear();
    ls.access_log_off = false;
    s.access_log_here = true;
  }
  if (n.args[0] == "off") {
    if (n.args.size() != 1) return invalid_value(n, n.args[1]);
    ls.access_logs.clear();
    ls.access_log_off = true;
    return Ok{};
  }
  AccessLog log;
  if (starts_with(n.args[0], "syslog:")) {
    auto target = log::parse_syslog_target(std::string_view(n.args[0]).substr(7));
    if (!target) return node_error(n, target.error());
    log.syslog = std::make_shared<const log::SyslogTarget>(std::move(*target));
    log.path = n.args[0];
  } else if (n.args[0].find('$') != std::string::npos) {
    // A file per request, named by variables (`access_log logs/$host;`).
    auto t = compile_template(n.args[0]);
    if (!t) return node_error(n, t.error());
    log.path_template = std::move(*t);
    log.path = n.args[0];
  } else {
    log.path = c.full_path(n.args[0]);
    note_access_log_file(c.cfg(), log.path);
  }
  std::string fmt = n.args.size() > 1 ? n.args[1] : "combined";
  auto it = c.cfg().log_formats.find(fmt);
  if (it == c.cfg().log_formats.end()) return node_error(n, "unknown log format " + q(fmt));
  log.format = it->second;
  for (size_t i = 2; i < n.args.size(); ++i) {
    std::string_view a = n.args[i];
    if (auto st = parse_log_buffering(n, a, log.buffering)) {
      if (!*st) return *st;
    } else if (starts_with(a, "if=")) {
      auto t = template_arg(n, a.substr(3));
      if (!t) return Error{t.error()};
      log.condition = std::move(*t);
    } else {
      return node_error(n, "invalid parameter " + q(a));
    }
  }
  if (Status st = finish_log_buffering(n, log.buffering, log.syslog != nullptr); !st) return st;
  if (!log.path_template.empty() && log.buffering.size)
    return node_error(n, "buffered logs cannot have variables in name");
  ls.access_logs.push_back(std::move(log));
  return Ok{};
}

Status set_log_format(Compiler& c, Scope&, const Node& n) {
  auto fmt = std::make_shared<LogFormat>();
  fmt->name = n.args[0];
  auto existing = c.cfg().log_formats.find(fmt->name);
  if (existing != c.cfg().log_formats.end() && !existing->second->builtin)
    return node_error(n, "duplicate \"log_format\" name " + q(fmt->name));
  size_t i = 1;
  if (starts_with(n.args[i], "escape=")) {
    std::string_view e = std::string_view(n.args[i]).substr(7);
    if (e == "json") {
      fmt->json_escape = true;
    } else if (e == "none") {
      fmt->escape_none = true;
    } else if (e != "default") {
      return invalid_value(n, n.args[i]);
    }
    ++i;
  }
  if (i >= n.args.size())
    return node_error(n, "invalid number of arguments in \"log_format\" directive");
  std::string text;
  for (; i < n.args.size(); ++i) text += n.args[i];
  auto t = template_arg(n, text);
  if (!t) return Error{t.error()};
  fmt->format = std::move(*t);
  c.cfg().log_formats[fmt->name] = std::move(fmt);
  return Ok{};
}

Status set_large_buffers(Compiler&, Scope& s, const Node& n) {
  uint64_t num = 0;
  int64_t size = 0;
  if (!parse_number(n.args[0], num) || num == 0) return invalid_value(n, n.args[0]);
  if (!parse_size(n.args[1], size) || size == 0) return invalid_value(n, n.args[1]);
  s.server->large_client_header_buffers.number = num;
  s.server->large_client_header_buffers.size = static_cast<size_t>(size);
  return Ok{};
}

Status set_client_header_buffer(Compiler&, Scope& s, const Node& n) {
  int64_t size = 0;
  if (!parse_size(n.args[0], size) || size == 0) return invalid_value(n, n.args[0]);
  s.server->client_header_buffer_size = static_cast<size_t>(size);
  return Ok{};
}

// ---- server ----------------------------------------------------------------

Status set_server(Compiler& c, Scope& s, const Node& n) { return c.server(s, n); }
Status set_location(Compiler& c, Scope& s, const Node& n) { return c.location(s, n); }

bool parse_port(std::string_view s, uint16_t& port) {
  uint64_t v = 0;
  if (!parse_number(s, v) || v == 0 || v > 65535) return false;
  port = static_cast<uint16_t>(v);
  return true;
}

// so_keepalive=on|off|[IDLE]:[INTVL]:[CNT] (nginx's; IDLE with time units).
Status parse_so_keepalive(const Node& n, std::string_view v, Listen& l) {
  if (v == "on" || v == "off") {
    l.so_keepalive = v == "on";
    return Ok{};
  }
  int* fields[] = {&l.keepidle, &l.keepintvl, &l.keepcnt};
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t colon = i < 2 ? v.find(':', at) : std::string_view::npos;
    if (i < 2 && colon == std::string_view::npos) return invalid_value(n, "so_keepalive=" + std::string(v));
    std::string_view part = v.substr(at, colon == std::string_view::npos ? std::string_view::npos : colon - at);
    at = colon + 1;
    if (part.empty()) continue;
    int64_t ms = 0;
    uint64_t count = 0;
    if (i < 2 ? !parse_time_ms(part, ms) || ms < 1000 : !parse_number(part, count) || count == 0)
      return invalid_value(n, "so_keepalive=" + std::string(v));
    *fields[i] = i < 2 ? int(ms / 1000) : int(count);
  }
  l.so_keepalive = 1;
  return Ok{};
}

Status set_listen(Compiler& c, Scope& s, const Node& n) {
  std::string_view addr = n.args[0];
  Listen l;
  std::string host;
  uint16_t port = 80;
  auto bad_port = [&] { return node_error(n, "invalid port in " + q(addr) + " of the \"listen\" directive"); };
  if (starts_with(addr, "unix:")) {
    // One socket file the whole process shares (net/unix_listeners).
    const std::string_view path = addr.substr(5);
    if (!net::unix_address(path, l.addr, l.addr_len)) {
      const char* problem = path.empty() ? "no path in the unix domain socket" : "too long path in the unix domain socket";
      return node_error(n, std::string(problem) + " in " + q(addr) + " of the \"listen\" directive");
    }
    l.text = std::string(addr);
  } else if (!addr.empty() && addr[0] == '[') {
    size_t close = addr.find(']');
    if (close == std::string_view::npos)
      return node_error(n, "invalid IPv6 address in " + q(addr) + " of the \"listen\" directive");
    host = std::string(addr.substr(1, close - 1));
    std::string_view rest = addr.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':' || !parse_port(rest.substr(1), port)) return bad_port();
    }
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    if (inet_pton(AF_INET6, host.c_str(), &sa.sin6_addr) != 1)
      return node_error(n, "invalid IPv6 address in " + q(addr) + " of the \"listen\" directive");
    sa.sin6_port = htons(port);
    std::memcpy(&l.addr, &sa, sizeof sa);
    l.addr_len = sizeof sa;
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, &sa.sin6_addr, buf, sizeof buf);
    l.text = "[" + std::string(buf) + "]:" + std::to_string(port);
  } else {
    size_t colon = addr.rfind(':');
    bool all_digits = !addr.empty() && addr.find_first_not_of("0123456789") == std::string_view::npos;
    if (all_digits) {
      if (!parse_port(addr, port)) return bad_port();
      host = "*";
    } else if (colon != std::string_view::npos) {
      host = std::string(addr.substr(0, colon));
      if (!parse_port(addr.substr(colon + 1), port)) return bad_port();
    } else {
      host = std::string(addr);
    }
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    if (host == "*") {
      sa.sin_addr.s_addr = htonl(INADDR_ANY);
    } else if (inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1) {
      addrinfo hints{};
      hints.ai_family = AF_INET;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      if (host.empty() || getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res)
        return node_error(n, "host not found in " + q(addr) + " of the \"listen\" directive");
      sa.sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
      freeaddrinfo(res);
    }
    std::memcpy(&l.addr, &sa, sizeof sa);
    l.addr_len = sizeof sa;
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa.sin_addr, buf, sizeof buf);
    l.text = std::string(buf) + ":" + std::to_string(port);
  }

  for (size_t i = 1; i < n.args.size(); ++i) {
    std::string_view a = n.args[i];
    if (a == "default_server" || a == "default") {
      l.default_server = true;
    } else if (a == "reuseport") {
      l.reuseport = true;
    } else if (starts_with(a, "backlog=")) {
      uint64_t v = 0;
      if (!parse_number(a.substr(8), v) || v == 0 || v > 65535) return invalid_value(n, a);
      l.backlog = static_cast<int>(v);
    } else if (a == "ipv6only=on" || a == "ipv6only=off") {
      l.ipv6only = a == "ipv6only=on";
    } else if (a == "http2") {
      l.http2 = true;  // nginx's older spelling of `http2 on`
    } else if (a == "ssl") {
      l.ssl = true;
    } else if (a == "deferred") {
      l.deferred = true;
    } else if (starts_with(a, "fastopen=") || starts_with(a, "rcvbuf=") || starts_with(a, "sndbuf=")) {
      const size_t eq = a.find('=');
      int64_t v = 0;
      if (!parse_size(a.substr(eq + 1), v) || v <= 0 || v > INT32_MAX) return invalid_value(n, a);
      (a[0] == 'f' ? l.fastopen : a[0] == 'r' ? l.rcvbuf : l.sndbuf) = int(v);
    } else if (starts_with(a, "so_keepalive=")) {
      if (Status st = parse_so_keepalive(n, a.substr(13), l); !st) return st;
    } else if (a == "quic") {
      l.quic = true;
    } else if (a == "proxy_protocol") {
      l.proxy_protocol = true;
    } else if (a == "bind") {
      // Every address gets its own listening socket in torii, wildcard or
      // not: what nginx does only for the addresses marked `bind`.
    } else {
      return node_error(n, "invalid parameter " + q(a) + " in \"listen\" directive");
    }
  }
  // nginx's checks: a quic listen is UDP, so TLS over TCP and h2 do not apply.
  if (l.quic && l.ssl) return node_error(n, "\"ssl\" parameter is incompatible with \"quic\"");
  if (l.quic && l.http2) return node_error(n, "\"http2\" parameter is incompatible with \"quic\"");
  if (l.quic && l.proxy_protocol) return node_error(n, "\"proxy_protocol\" parameter is incompatible with \"quic\"");
  if (l.quic && l.addr.ss_family == AF_UNIX) return node_error(n, "\"quic\" parameter is incompatible with unix domain sockets");
  s.server->listens.push_back(std::move(l));
  return Ok{};
}

Status set_server_name(Compiler& c, Scope& s, const Node& n) {
  for (const auto& raw : n.args) {
    // A '/' is no host's: most often a missing ';' made the next line's
    // path part of the name, as nginx warns.
    if (raw.find('/') != std::string::npos) c.warn(n, "server name " + q(raw) + " has suspicious symbols");
    ServerName sn;
    if (!raw.empty() && raw[0] == '~') {
      // The host is lower-cased before matching, so a pattern with a capital
      // letter is compiled caseless (nginx's rule: any A-Z makes it so).
      std::string_view pattern = std::string_view(raw).substr(1);
      bool caseless = std::any_of(pattern.begin(), pattern.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; });
      auto re = Regex::compile(pattern, caseless);
      if (!re) return node_error(n, re.error());
      sn.kind = ServerName::Kind::regex;
      sn.name = raw;
      sn.regex = std::move(*re);
      s.server->names.push_back(std::move(sn));
      continue;
    }
    classify_server_name(raw, sn);
    if (sn.name.find('*') != std::string::npos || (sn.kind != ServerName::Kind::exact && sn.name.size() < 2))
      return node_error(n, "invalid server name or wildcard " + q(raw));
    s.server->names.push_back(std::move(sn));
  }
  return Ok{};
}

// ---- location content -------------------------------------------------------

// client_body_temp_path PATH [LEVEL1 [LEVEL2 [LEVEL3]]]: the levels spread
// the body files over subfolders (core/temp_file), as nginx's.
Status set_client_body_temp_path(Compiler& c, Scope& s, const Node& n) {
  if (auto st = parse_temp_levels(n, s.settings->client_body_temp_levels); !st) return st;
  std::string p = c.full_path(n.args[0]);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  s.settings->client_body_temp_path = std::move(p);
  return Ok{};
}

Status set_root(Compiler& c, Scope& s, const Node& n) {
  for (auto other : s.seen)
    if (other == "alias") return node_error(n, "\"root\" directive is duplicate, \"alias\" directive was specified earlier");
  s.settings->root_template = Template{};
  s.settings->alias_template = Template{};
  if (n.args[0].find('$') != std::string::npos) {
    auto t = compile_template(n.args[0]);
    if (!t) return node_error(n, t.error());
    s.settings->root_template = std::move(*t);
  }
  std::string p = c.full_path(n.args[0]);
  // nginx drops a trailing slash from root: the URI brings its own.
  if (!p.empty() && p.back() == '/') p.pop_back();
  s.settings->root = std::move(p);
  s.settings->alias.clear();
  return Ok{};
}

Status set_alias(Compiler& c, Scope& s, const Node& n) {
  for (auto other : s.seen)
    if (other == "root") return node_error(n, "\"alias\" directive is duplicate, \"root\" directive was specified earlier");
  if (s.location && s.location->match == Location::Match::named)
    return node_error(n, "\"alias\" directive cannot be used inside the named location");
  s.settings->root_template = Template{};
  s.settings->alias_template = Template{};
  if (n.args[0].find('$') != std::string::npos) {
    auto t = compile_template(n.args[0]);
    if (!t) return node_error(n, t.error());
    s.settings->alias_template = std::move(*t);
  }
  s.settings->alias = c.full_path(n.args[0]);
  const bool regex = s.location && (s.location->match == Location::Match::regex ||
                                    s.location->match == Location::Match::regex_icase);
  s.settings->alias_names_file = regex || !s.location;
  s.settings->alias_prefix = s.location && !regex ? s.location->pattern : std::string();
  return Ok{};
}

Status set_index(Compiler&, Scope& s, const Node& n) {
  if (!s.index_here) {
    s.settings->index.clear();
    s.index_here = true;
  }
  for (const auto& a : n.args) {
    if (a.empty()) return node_error(n, "index \"\" in \"index\" directive is invalid");
    auto t = compile_template(a);
    if (!t) return node_error(n, t.error());
    s.settings->index.push_back(std::move(*t));
  }
  return Ok{};
}

Status set_try_files(Compiler&, Scope& s, const Node& n) {
  std::vector<Template> list;
  for (size_t i = 0; i < n.args.size(); ++i) {
    const auto& a = n.args[i];
    if (a.size() > 1 && a[0] == '=' && i + 1 == n.args.size()) {
      uint64_t code = 0;
      if (!parse_number(std::string_view(a).substr(1), code) || code > 999)
        return node_error(n, "invalid code " + q(a) + " in \"try_files\" directive");
    }
    auto t = template_arg(n, a);
    if (!t) return Error{t.error()};
    list.push_back(std::move(*t));
  }
  s.settings->try_files = std::move(list);
  return Ok{};
}

Status set_error_page(Compiler&, Scope& s, const Node& n) {
  ErrorPage ep;
  size_t last = n.args.size() - 1;
  for (size_t i = 0; i < last; ++i) {
    std::string_view a = n.args[i];
    if (!a.empty() && a[0] == '=') {
      if (i + 1 != last) return invalid_value(n, a);
      if (a.size() == 1) {
        ep.response_code = 0;
      } else {
        uint64_t code = 0;
        if (!parse_number(a.substr(1), code) || code > 999) return invalid_value(n, a);
        ep.response_code = static_cast<int>(code);
      }
      continue;
    }
    uint64_t code = 0;
    if (!parse_number(a, code)) return invalid_value(n, a);
    if (code < 300 || code > 599 || code == 499)
      return node_error(n, "value " + q(a) + " must be between 300 and 599");
    ep.codes.push_back(static_cast<int>(code));
  }
  if (ep.codes.empty()) return node_error(n, "invalid number of arguments in \"error_page\" directive");
  auto t = template_arg(n, n.args[last]);
  if (!t) return Error{t.error()};
  ep.uri = std::move(*t);
  if (!s.error_page_here) {
    s.settings->error_pages.clear();
    s.error_page_here = true;
  }
  s.settings->error_pages.push_back(std::move(ep));
  return Ok{};
}

Status set_add_header(Compiler&, Scope& s, const Node& n) {
  AddHeader h;
  h.name = n.args[0];
  if (h.name.empty()) return invalid_value(n, h.name);
  if (core::iequals(h.name, "Last-Modified") || core::iequals(h.name, "ETag"))
    h.kind = AddHeader::Kind::validator;
  else if (core::iequals(h.name, "Content-Type"))
    h.kind = AddHeader::Kind::content_type;
  auto t = template_arg(n, n.args[1]);
  if (!t) return Error{t.error()};
  h.value = std::move(*t);
  if (n.args.size() == 3) {
    if (n.args[2] != "always") return invalid_value(n, n.args[2]);
    h.always = true;
  }
  if (!s.add_header_here) {
    s.outer_headers = std::move(s.settings->add_headers);
    s.settings->add_headers.clear();
    s.add_header_here = true;
  }
  s.settings->add_headers.push_back(std::move(h));
  return Ok{};
}

Status set_expires(Compiler&, Scope& s, const Node& n) {
  Expires e;
  e.kind = Expires::Kind::after_access;
  if (n.args.size() == 2) {
    if (n.args[0] != "modified") return invalid_value(n, n.args[0]);
    e.kind = Expires::Kind::after_modified;
  }
  const std::string& v = n.args.back();
  auto t = template_arg(n, v);
  if (!t) return Error{t.error()};
  if (!t->is_constant()) {
    e.value = std::move(*t);
  } else if (const char* err = parse_expires(v, e.kind, e.seconds)) {
    if (std::string_view(err) == "invalid value") return invalid_value(n, v);
    return node_error(n, "\"" + n.name + "\" directive " + err);
  }
  s.settings->expires = std::move(e);
  return Ok{};
}

// torii's own: the location answers with the metrics text.
Status set_metrics(Compiler& c, Scope& s, const Node&) {
  s.settings->metrics = true;
  c.cfg().metrics_enabled = true;
  return Ok{};
}

Status set_internal(Compiler&, Scope& s, const Node&) {
  s.settings->internal = true;
  return Ok{};
}

Status set_access_rule(Compiler& c, Scope& s, const Node& n) {
  auto r = parse_access_rule(c, n, n.args[0], n.name == "allow");
  if (!r) return Error{r.error()};
  if (!s.access_rules_here) {
    s.settings->access_rules.clear();
    s.access_rules_here = true;
  }
  s.settings->access_rules.push_back(*r);
  return Ok{};
}

Status set_limit_except(Compiler& c, Scope& s, const Node& n) {
  auto le = std::make_shared<LimitExcept>();
  for (const auto& m : n.args) {
    http::Method method = http::parse_method(m);
    if (method == http::Method::unknown || method == http::Method::trace ||
        method == http::Method::connect)
      return node_error(n, "invalid method " + q(m));
    le->methods.push_back(method);
    if (method == http::Method::get) le->methods.push_back(http::Method::head);
  }
  // Run after the location's own lines (a block directive), so the copy
  // has all of them, as nginx merges the block from its location.
  auto loc = std::make_shared<Location>();
  if (s.location) {
    loc->match = s.location->match;
    loc->pattern = s.location->pattern;
    loc->regex = s.location->regex;
  }
  loc->file = n.file ? *n.file : std::string();
  loc->line = n.line;
  loc->settings = *s.settings;
  loc->settings.rewrite.reset();
  loc->settings.try_files.clear();
  loc->settings.limit_except.reset();
  Scope inner;
  inner.ctx = kLimitExcept;
  inner.settings = &loc->settings;
  inner.location = loc.get();
  inner.limit_except = le.get();
  auto st = c.block(n.children, inner);
  if (!st) return st;
  le->location = std::move(loc);
  s.settings->limit_except = std::move(le);
  return Ok{};
}

// ---- the table ---------------------------------------------------------------

constexpr uint16_t kHSL = kHttp | kServer | kLocation;
constexpr uint16_t kHS = kHttp | kServer;
constexpr Context kNone = kMain;

#define LOC_FLAG(f) &loc_flag<&LocationSettings::f>
#define SRV_FLAG(f) &srv_flag<&Server::f>

const DirectiveSpec kDirectives[] = {
    // main
    {"worker_processes", kMain, kArgs1, true, false, kNone, &set_worker_processes},
    {"worker_rlimit_nofile", kMain, kArgs1, true, false, kNone, &set_rlimit_nofile},
    {"pid", kMain, kArgs1, true, false, kNone, &set_pid},
    {"user", kMain, kArgs1 | kArgs2, true, false, kNone, &set_user},
    {"daemon", kMain, kFlag, true, false, kNone, &set_daemon},
    {"master_process", kMain, kFlag, true, false, kNone, &accept_flag},
    {"error_log", kMain | kHSL, kArgs1 | kArgs2, false, false, kNone, &set_error_log},
    {"events", kMain, kArgs0 | kBlock, true, false, kEvents, &set_events},
    {"http", kMain, kArgs0 | kBlock, true, false, kHttp, &set_http},
    // events
    {"worker_connections", kEvents, kArgs1, true, false, kNone, &set_worker_connections},
    {"multi_accept", kEvents, kFlag, true, false, kNone, &set_multi_accept},
    {"use", kEvents, kArgs1, true, false, kNone, &set_use},
    // http
    {"types", kHSL, kArgs0 | kBlock, false, false, kTypes, &set_types},
    {"default_type", kHSL, kArgs1, true, false, kNone, &set_default_type},
    {"types_hash_max_size", kHSL, kArgs1, true, false, kNone, &accept_size},
    {"types_hash_bucket_size", kHSL, kArgs1, true, false, kNone, &accept_size},
    {"sendfile", kHSL | kLocationIf, kFlag, true, false, kNone, LOC_FLAG(sendfile)},
    {"tcp_nopush", kHSL, kFlag, true, false, kNone, LOC_FLAG(tcp_nopush)},
    {"tcp_nodelay", kHSL, kFlag, true, false, kNone, LOC_FLAG(tcp_nodelay)},
    {"keepalive_timeout", kHSL, kArgs1 | kArgs2, true, false, kNone, &set_keepalive_timeout},
    {"keepalive_requests", kHSL, kArgs1, true, false, kNone, &set_keepalive_requests},
    {"open_file_cache", kHSL, kArgs1 | kArgs2, true, false, kNone, &set_open_file_cache},
    {"open_file_cache_valid", kHSL, kArgs1, true, false, kNone, &set_ofc_valid},
    {"open_file_cache_min_uses", kHSL, kArgs1, true, false, kNone, &set_ofc_min_uses},
    {"open_file_cache_errors", kHSL, kFlag, true, false, kNone, &set_ofc_errors},
    {"server_tokens", kHSL, kArgs1, true, false, kNone, &set_server_tokens},
    {"access_log", kHSL | kLocationIf | kLimitExcept, kArgs1More, false, false, kNone, &set_access_log},
    {"log_format", kHttp, kArgs2More, false, false, kNone, &set_log_format},
    {"client_header_timeout", kHS, kArgs1, true, false, kNone, &srv_time<&Server::client_header_timeout>},
    {"client_header_buffer_size", kHS, kArgs1, true, false, kNone, &set_client_header_buffer},
    {"large_client_header_buffers", kHS, kArgs2, true, false, kNone, &set_large_buffers},
    {"client_body_timeout", kHSL, kArgs1, true, false, kNone, &loc_time<&LocationSettings::client_body_timeout>},
    {"client_max_body_size", kHSL, kArgs1, true, false, kNone, &loc_size<int64_t, &LocationSettings::client_max_body_size>},
    {"client_body_temp_path", kHSL, kArgs1More, true, false, kNone, &set_client_body_temp_path},
    {"client_body_buffer_size", kHSL, kArgs1, true, false, kNone, &loc_size<size_t, &LocationSettings::client_body_buffer_size>},
    {"send_timeout", kHSL, kArgs1, true, false, kNone, &loc_time<&LocationSettings::send_timeout>},
    {"log_not_found", kHSL, kFlag, true, false, kNone, LOC_FLAG(log_not_found)},
    {"recursive_error_pages", kHSL, kFlag, true, false, kNone, LOC_FLAG(recursive_error_pages)},
    {"etag", kHSL, kFlag, true, false, kNone, LOC_FLAG(etag)},
    {"ignore_invalid_headers", kHS, kFlag, true, false, kNone, SRV_FLAG(ignore_invalid_headers)},
    {"underscores_in_headers", kHS, kFlag, true, false, kNone, SRV_FLAG(underscores_in_headers)},
    {"merge_slashes", kHS, kFlag, true, false, kNone, SRV_FLAG(merge_slashes)},
    {"server", kHttp, kArgs0 | kBlock, false, true, kServer, &set_server},
    // server
    {"listen", kServer, kArgs1More, false, false, kNone, &set_listen},
    {"server_name", kServer, kArgs1More, false, false, kNone, &set_server_name},
    {"location", kServer | kLocation, kArgs1 | kArgs2 | kBlock, false, true, kLocation, &set_location},
    {"root", kHSL | kLocationIf, kArgs1, true, false, kNone, &set_root},
    {"alias", kLocation, kArgs1, true, false, kNone, &set_alias},
    {"index", kHSL, kArgs1More, false, false, kNone, &set_index},
    {"try_files", kServer | kLocation, kArgs2More, true, false, kNone, &set_try_files},
    {"error_page", kHSL | kLocationIf, kArgs2More, false, false, kNone, &set_error_page},
    {"add_header", kHSL | kLocationIf, kArgs2 | kArgs3, false, false, kNone, &set_add_header},
    {"expires", kHSL | kLocationIf, kArgs1 | kArgs2, true, false, kNone, &set_expires},
    {"limit_except", kLocation, kArgs1More | kBlock, true, false, kLimitExcept, &set_limit_except},
    {"allow", kHSL | kLimitExcept, kArgs1, false, false, kNone, &set_access_rule},
    {"deny", kHSL | kLimitExcept, kArgs1, false, false, kNone, &set_access_rule},
    {"internal", kLocation, kArgs0, true, false, kNone, &set_internal},
    {"metrics", kLocation, kArgs0, true, false, kNone, &set_metrics},
};

#undef LOC_FLAG
#undef SRV_FLAG

}  // namespace

Error node_error(const Node& n, const std::string& message) { return make_error(n.where() + message); }

const DirectiveSpec* find_directive(std::string_view name) {
  for (const auto& d : kDirectives)
    if (d.name == name) return &d;
  // The modules' own tables, each in its directives_<module>.cc.
  for (auto table : {ssl_directives(), proxy_directives(), proxy_ssl_directives(), http2_directives(), http3_directives(),
                     rewrite_directives(), gzip_directives(), resolver_directives(), small_directives(), core_extra_directives(), core_tuning_directives(), charset_directives(), certificate_cache_directives(), nginx_compat_directives(),
                     limits_directives(), auth_directives(),
                     upstream_file_directives(), upstream_socket_directives(), upstream_range_directives(), fastcgi_directives(), uwsgi_directives(), scgi_directives(), grpc_directives(), memcached_directives(),
                     identity_directives(), geoip_directives(), geoip2_directives(), browser_directives(), status_directives(), client_cert_directives(),
                     ssl_stapling_directives(), ssl_password_directives(), cache_directives(), sub_directives(), ssi_directives(),
                     referer_directives(), secure_link_directives(), small_module_directives(), pseudo_streaming_directives(), process_directives(), mirror_directives(), trailer_directives(), field_inherit_directives(), dav_directives(), dav_ext_directives(), userid_directives(), headers_more_directives(), image_filter_directives(),
                     symlink_directives(), default_only_directives(), admin_directives(), stream_directives()}) {
    for (const auto& d : table)
      if (d.name == name) return &d;
  }
  return nullptr;
}

void classify_server_name(std::string name, ServerName& sn) {
  for (auto& ch : name)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  if (starts_with(name, "*.")) {
    sn.kind = ServerName::Kind::wildcard_front;
    sn.name = name.substr(1);  // ".example.com"
  } else if (name.size() > 1 && name[0] == '.') {
    sn.kind = ServerName::Kind::wildcard_front;
    sn.name = name;
    sn.matches_bare = true;
  } else if (name.size() > 2 && name.compare(name.size() - 2, 2, ".*") == 0) {
    sn.kind = ServerName::Kind::wildcard_back;
    sn.name = name.substr(0, name.size() - 1);  // "www."
  } else {
    sn.kind = ServerName::Kind::exact;
    sn.name = name;
  }
}

Status parse_temp_levels(const Node& n, std::array<uint8_t, 3>& out) {
  // nginx's ngx_conf_set_path_slot: each level a positive number, ten digits in all.
  if (n.args.size() > 4) return node_error(n, "invalid number of arguments in " + q(n.name) + " directive");
  out = {};
  uint64_t digits = 0;
  for (size_t i = 1; i < n.args.size(); ++i) {
    uint64_t level = 0;
    if (!parse_number(n.args[i], level) || level == 0 || (digits += level) > 10)
      return node_error(n, q(n.name) + " directive invalid value");
    out[i - 1] = static_cast<uint8_t>(level);
  }
  return Ok{};
}

bool parse_number(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out = v;
  return true;
}

bool parse_size(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  int64_t scale = 1;
  switch (s.back()) {
    case 'k':
    case 'K':
      scale = 1024;
      break;
    case 'm':
    case 'M':
      scale = 1024 * 1024;
      break;
    case 'g':
    case 'G':
      scale = 1024 * 1024 * 1024;
      break;
    default:
      break;
  }
  if (scale != 1) s.remove_suffix(1);
  uint64_t v = 0;
  if (!parse_number(s, v)) return false;
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / scale)) return false;
  out = static_cast<int64_t>(v) * scale;
  return true;
}

bool parse_time_ms(std::string_view s, int64_t& out) {
  // nginx: "1h 30m", "1y", "500ms"; units must go from larger to smaller and
  // a bare number means seconds.
  constexpr int64_t kSec = 1000;
  struct Unit {
    std::string_view name;
    int64_t ms;
  };
  static constexpr Unit kUnits[] = {
      {"y", 365 * 86400 * kSec}, {"M", 30 * 86400 * kSec}, {"w", 7 * 86400 * kSec},
      {"d", 86400 * kSec},       {"h", 3600 * kSec},       {"m", 60 * kSec},
      {"s", kSec},               {"ms", 1},
  };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 4;
  int64_t total = 0;
  size_t i = 0;
  size_t last_unit = 0;  // index + 1 of the previous unit, to enforce order
  bool any = false;
  while (i < s.size()) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    uint64_t v = 0;
    if (!parse_number(s.substr(start, i - start), v)) return false;
    size_t ustart = i;
    while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || s[i] == 'M')) ++i;
    std::string_view unit = s.substr(ustart, i - ustart);
    int64_t mul = 0;
    size_t idx = 0;
    if (unit.empty()) {
      // A bare number is seconds and must come last.
      if (i != s.size()) return false;
      mul = kSec;
      idx = 7;
    } else {
      for (size_t u = 0; u < std::size(kUnits); ++u) {
        if (kUnits[u].name == unit) {
          mul = kUnits[u].ms;
          idx = u + 1;
        }
      }
      if (!mul) return false;
    }
    if (idx <= last_unit) return false;
    last_unit = idx;
    if (v > static_cast<uint64_t>(kMax / mul)) return false;
    total += static_cast<int64_t>(v) * mul;
    if (total > kMax) return false;
    any = true;
  }
  if (!any) return false;
  out = total;
  return true;
}

}  // namespace torii::config
