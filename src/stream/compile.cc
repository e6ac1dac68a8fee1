// The `stream {}` block's compiler: its own directive table (nginx's
// ngx_stream_* modules), reusing the http side's readers where the syntax
// is the same (listen, an upstream's server lines, allow/deny, resolver,
// proxy_bind). A directive torii knows in http but not here is refused as
// nginx refuses it: "X" directive is not allowed here.
#include "stream/compile.h"

#include "config/realip_config.h"
#include "core/quote.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "config/directives.h"
#include "config/geoip_config.h"
#include "config/nginx_directives.h"
#include "config/proxy_config.h"
#include "config/regex.h"
#include "config/shared_zone.h"
#include "config/ssl_config.h"
#include "config/template.h"
#include "config/upstream_tls_config.h"
#include "dns/resolver_config.h"
#include "log/server_error_logs.h"
#include "log/syslog.h"
#include "config/geo_config.h"
#include "modules/geo/geo_compiler.h"
#include "modules/geoip2/block_reader.h"
#include "modules/split_clients/split_clients.h"
#include "modules/limit_conn/conn_table.h"
#include "net/tls_context.h"
#include "net/upstream_tls_context.h"
#include "stream/variables.h"

namespace torii::stream {

namespace {

using config::Compiler;
using config::Node;
using config::node_error;

// nginx's generic slot readers (times, sizes) say it this way.
Error slot_invalid(const Node& n) { return node_error(n, q(n.name) + " directive invalid value"); }

enum Where : uint8_t { kStream = 1, kServer = 2, kBoth = 3 };

struct Scope {
  Settings* settings = nullptr;
  Server* server = nullptr;  // null at the stream level
  // The http block whose setters the ssl_* and proxy_ssl_* directives run
  // on: its `ssl` and `settings.proxy` carry this level's TLS settings
  // (copied on write, so a server that sets none shares the stream's).
  config::Server* twin = nullptr;
  bool access_rules_here = false;
  bool realip_from_here = false;
  bool conn_limits_here = false;
  bool access_log_here = false;
  std::vector<std::string_view> seen;
};

class StreamCompiler;
using Setter = Status (*)(StreamCompiler&, Scope&, const Node&);

struct Directive {
  std::string_view name;
  uint8_t where;
  size_t min_args, max_args;
  bool flag;    // exactly on|off
  bool unique;  // a second one in one block is "duplicate"
  Setter set;
};

class StreamCompiler {
 public:
  StreamCompiler(Compiler& c, StreamConfig& out) : c_(c), out_(out) {}
  Status run(const Node& stream);

  Compiler& base() { return c_; }
  StreamConfig& out() { return out_; }
  VariableNames& names() { return names_; }
  Result<Template> compile(const Node& n, std::string_view text, const NamedGroups* groups = nullptr) {
    auto t = compile_template(text, names_, groups);
    if (!t) return node_error(n, t.error());
    for (const auto& p : t->parts)
      if (p.is_variable && p.var == Var::ssl_ciphers) out_.reads_ssl_ciphers = true;
    return t;
  }
  const LogFormat* format(std::string_view name) const {
    for (const auto& f : formats_)
      if (f->name == name) return f.get();
    return nullptr;
  }
  std::shared_ptr<const LogFormat> format_ptr(std::string_view name) const {
    for (const auto& f : formats_)
      if (f->name == name) return f;
    return nullptr;
  }
  void add_format(std::shared_ptr<LogFormat> f) { formats_.push_back(std::move(f)); }
  // The limit_conn zone of that name, made (not yet defined) when new.
  ConnZone& conn_zone(std::string_view name) {
    for (auto& z : out_.conn_zones)
      if (z->name == name) return *z;
    auto z = std::make_shared<ConnZone>();
    z->name = std::string(name);
    out_.conn_zones.push_back(z);
    return *z;
  }
  std::shared_ptr<const ConnZone> conn_zone_ptr(std::string_view name) {
    conn_zone(name);
    for (auto& z : out_.conn_zones)
      if (z->name == name) return z;
    return nullptr;
  }
  Status upstream(const Node& n);
  Status map(const Node& n);
  Status split_clients(const Node& n);
  Status geo(const Node& n);
  Status geoip2(const Node& n);
  Status server(const Settings& inherited, const config::Server& inherited_twin, const Node& n);
  Status block(const std::vector<Node>& nodes, Scope& scope, Where where);
  // A name proxy_pass gives: an upstream {} block, else a host:port of its own.
  Result<std::shared_ptr<const Upstream>> group_for(const Node& n, std::string_view target);

 private:
  Status build_listen_groups();
  Status build_tls_contexts(Server& srv);

  Compiler& c_;
  // Server TLS settings objects and their copies with a context: servers
  // that share settings share a context and its session cache. The key's
  // object is held so that its address is not reused by another.
  struct Built {
    std::shared_ptr<const config::SslServerConfig> settings;
    std::shared_ptr<const config::SslServerConfig> with_context;
  };
  std::unordered_map<const config::SslServerConfig*, Built> built_;
  StreamConfig& out_;
  VariableNames names_;
  std::vector<std::shared_ptr<LogFormat>> formats_;
};

// ---- setters ---------------------------------------------------------------

template <Ms Settings::*F>
Status set_time(StreamCompiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!config::parse_time_ms(n.args[0], ms)) return slot_invalid(n);
  s.settings->*F = Ms(ms);
  return Ok{};
}

template <size_t Settings::*F>
Status set_size(StreamCompiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!config::parse_size(n.args[0], v) || v <= 0) return slot_invalid(n);
  s.settings->*F = size_t(v);
  return Ok{};
}

template <bool Settings::*F>
Status set_flag(StreamCompiler&, Scope& s, const Node& n) {
  s.settings->*F = n.args[0] == "on";
  return Ok{};
}

// proxy_upload_rate / proxy_download_rate SIZE: a size, or variables
// rendered for each session (nginx 1.19.5+).
template <Rate Settings::*F>
Status set_rate(StreamCompiler& sc, Scope& s, const Node& n) {
  Rate r;
  if (n.args[0].find('$') != std::string::npos) {
    auto t = sc.compile(n, n.args[0]);
    if (!t) return Error{t.error()};
    r.value = std::move(*t);
  } else {
    int64_t v = 0;
    if (!config::parse_size(n.args[0], v) || v < 0) return slot_invalid(n);
    r.bytes = uint64_t(v);
  }
  s.settings->*F = std::move(r);
  return Ok{};
}

// proxy_requests / proxy_responses NUMBER (nginx's number slot).
Status set_requests(StreamCompiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!config::parse_number(n.args[0], v) || v > 0x7fffffff) return node_error(n, q(n.name) + " directive invalid number");
  s.settings->requests = v;
  return Ok{};
}

Status set_responses(StreamCompiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!config::parse_number(n.args[0], v) || v > 0x7fffffff) return node_error(n, q(n.name) + " directive invalid number");
  s.settings->responses = int64_t(v);
  return Ok{};
}

// limit_conn_zone KEY zone=NAME:SIZE (read before the rest of the block,
// so a limit_conn may name a zone defined further down, as nginx allows).
Status set_limit_conn_zone(StreamCompiler& sc, Scope&, const Node& n) {
  std::string_view a = n.args[1];
  if (!a.starts_with("zone=")) return node_error(n, "invalid parameter " + q(a));
  std::string_view name;
  size_t size = 0;
  if (auto st = config::parse_shared_zone(n, a, name, size); !st) return st;
  auto key = sc.compile(n, n.args[0]);
  if (!key) return Error{key.error()};
  ConnZone& zone = sc.conn_zone(name);
  if (zone.defined)
    return node_error(n, "limit_conn_zone " + q(zone.name) + " is already bound to key " + q(zone.key.source));
  zone.defined = true;
  zone.size = size;
  zone.key = std::move(*key);
  zone.table = limits::ConnTable::acquire("stream " + zone.name, size);
  return Ok{};
}

// limit_conn ZONE NUMBER: a server's own lines replace the stream block's.
Status set_limit_conn(StreamCompiler& sc, Scope& s, const Node& n) {
  const ConnZone& zone = sc.conn_zone(n.args[0]);
  if (!s.conn_limits_here) {
    s.settings->conn_limits.clear();
    s.conn_limits_here = true;
  }
  for (const auto& l : s.settings->conn_limits)
    if (l.zone->name == zone.name) return node_error(n, q(n.name) + " directive is duplicate");
  uint64_t v = 0;
  if (!config::parse_number(n.args[1], v) || v == 0) return node_error(n, "invalid number of connections " + q(n.args[1]));
  if (v > 65535) return node_error(n, "connection limit must be less 65536");
  if (!zone.defined) return node_error(n, "zero size shared memory zone " + q(zone.name));
  s.settings->conn_limits.push_back({sc.conn_zone_ptr(zone.name), uint32_t(v)});
  return Ok{};
}

Status set_conn_log_level(StreamCompiler&, Scope& s, const Node& n) {
  static constexpr std::pair<std::string_view, config::LogLevel> kLevels[] = {{"info", config::LogLevel::info},
                                                                              {"notice", config::LogLevel::notice},
                                                                              {"warn", config::LogLevel::warn},
                                                                              {"error", config::LogLevel::error}};
  for (const auto& [name, level] : kLevels) {
    if (n.args[0] == name) {
      s.settings->conn_log_level = level;
      return Ok{};
    }
  }
  return node_error(n, "invalid value " + q(n.args[0]) + " in " + q(n.name) + " directive, it must be \"info\", " +
                           "\"notice\", \"warn\" or \"error\"");
}

Status set_tries(StreamCompiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!config::parse_number(n.args[0], v) || v > 1'000'000) return slot_invalid(n);
  s.settings->next_upstream_tries = unsigned(v);
  return Ok{};
}

Status set_bind(StreamCompiler&, Scope& s, const Node& n) {
  auto bind = config::parse_upstream_bind(n);
  if (!bind) return Error{bind.error()};
  if (*bind && !(*bind)->value.empty() && !(*bind)->value.is_constant())
    return node_error(n, "\"proxy_bind\" with variables is not yet supported in stream");
  s.settings->bind = std::move(*bind);
  return Ok{};
}

Status set_resolver(StreamCompiler&, Scope& s, const Node& n) {
  auto r = config::parse_resolver(n);
  if (!r) return Error{r.error()};
  s.settings->resolver = std::move(*r);
  return Ok{};
}

Status set_resolver_timeout(StreamCompiler&, Scope& s, const Node& n) {
  auto t = config::parse_resolver_timeout(n);
  if (!t) return Error{t.error()};
  s.settings->resolver_timeout = *t;
  return Ok{};
}

// error_log FILE [LEVEL]: read by the http reader; the sessions of the
// block write their lines to that file (opened now, as nginx does, so a
// bad path fails the load). A syslog: target leaves them in the process's
// log.
Status set_error_log(StreamCompiler& sc, Scope& s, const Node& n) {
  const auto* spec = config::find_directive("error_log");
  config::Scope probe;
  config::LocationSettings scratch;
  probe.ctx = config::kServer;
  probe.settings = &scratch;
  if (auto st = spec->set(sc.base(), probe, n); !st) return st;
  const config::ErrorLogConfig& el = *scratch.error_log;
  s.settings->error_log_fd = -1;
  s.settings->error_log_level = el.level;
  if (el.syslog) return Ok{};
  const int fd = log::server_error_log_fd(el.path);
  if (fd < 0) {
    const int err = errno;
    return node_error(n, "open() " + q(el.path) + " failed (" + std::to_string(err) + ": " + std::strerror(err) + ")");
  }
  s.settings->error_log_fd = fd;
  return Ok{};
}

// Runs the http module's setter of `n` on scratch settings: its reading
// (addresses, CIDR masks, "all", "unix:", host names) and its warnings.
Status run_http_setter(StreamCompiler& sc, const Node& n, config::LocationSettings& scratch) {
  config::Scope probe;
  probe.ctx = config::kServer;
  probe.settings = &scratch;
  return config::find_directive(n.name)->set(sc.base(), probe, n);
}

Status set_access_rule(StreamCompiler& sc, Scope& s, const Node& n) {
  config::LocationSettings scratch;
  if (auto st = run_http_setter(sc, n, scratch); !st) return st;
  if (!s.access_rules_here) {
    s.settings->access_rules.clear();
    s.access_rules_here = true;
  }
  s.settings->access_rules.push_back(scratch.access_rules.back());
  return Ok{};
}

Status set_real_ip_from(StreamCompiler& sc, Scope& s, const Node& n) {
  config::LocationSettings scratch;
  if (auto st = run_http_setter(sc, n, scratch); !st) return st;
  if (!s.realip_from_here) {  // the first one here replaces the inherited list
    s.settings->realip_from.clear();
    s.realip_from_here = true;
  }
  for (const auto& c : scratch.realip->from) s.settings->realip_from.push_back(c);
  return Ok{};
}

Status set_log_format(StreamCompiler& sc, Scope&, const Node& n) {
  if (sc.format(n.args[0])) return node_error(n, "duplicate \"log_format\" name " + q(n.args[0]));
  auto fmt = std::make_shared<LogFormat>();
  fmt->name = n.args[0];
  size_t i = 1;
  if (n.args[i].starts_with("escape=")) {
    std::string_view e = std::string_view(n.args[i]).substr(7);
    if (e == "json") {
      fmt->json_escape = true;
    } else if (e == "none") {
      fmt->escape_none = true;
    } else if (e != "default") {
      return node_error(n, "unknown log format escaping \"" + std::string(e) + "\"");
    }
    ++i;
  }
  if (i >= n.args.size()) return node_error(n, "invalid number of arguments in \"log_format\" directive");
  std::string text;
  for (; i < n.args.size(); ++i) text += n.args[i];
  auto t = sc.compile(n, text);
  if (!t) return Error{t.error()};
  fmt->format = std::move(*t);
  sc.add_format(std::move(fmt));
  return Ok{};
}

// access_log PATH FORMAT [buffer=] [flush=] [gzip[=N]] [if=] | off. Stream has no
// default format: nginx says "log format is not specified".
Status set_access_log(StreamCompiler& sc, Scope& s, const Node& n) {
  Settings& st = *s.settings;
  if (!s.access_log_here) {
    st.access_logs.clear();
    st.access_log_off = false;
    s.access_log_here = true;
  }
  if (n.args[0] == "off") {
    if (n.args.size() != 1) return node_error(n, "invalid parameter " + q(n.args[1]));
    st.access_logs.clear();
    st.access_log_off = true;
    return Ok{};
  }
  AccessLog log;
  if (n.args[0].starts_with("syslog:")) {
    auto target = log::parse_syslog_target(std::string_view(n.args[0]).substr(7));
    if (!target) return node_error(n, target.error());
    log.syslog = std::make_shared<const log::SyslogTarget>(std::move(*target));
    log.path = n.args[0];
  } else if (n.args[0].find('$') != std::string::npos) {
    auto t = sc.compile(n, n.args[0]);
    if (!t) return Error{t.error()};
    log.path_template = std::move(*t);
    log.path = n.args[0];
    log.prefix = sc.base().full_path("");
  } else {
    log.path = sc.base().full_path(n.args[0]);
    // Made when the config loads, as nginx opens every log it names (a
    // stream-level log every server overrides included).
    config::note_access_log_file(sc.base().cfg(), log.path);
  }
  if (n.args.size() < 2) return node_error(n, "log format is not specified");
  log.format = sc.format_ptr(n.args[1]);
  if (!log.format) return node_error(n, "unknown log format " + q(n.args[1]));
  for (size_t i = 2; i < n.args.size(); ++i) {
    std::string_view a = n.args[i];
    if (auto st = config::parse_log_buffering(n, a, log.buffering)) {
      if (!*st) return *st;
    } else if (a.starts_with("if=")) {
      auto t = sc.compile(n, a.substr(3));
      if (!t) return Error{t.error()};
      log.condition = std::move(*t);
    } else {
      return node_error(n, "invalid parameter " + q(a));
    }
  }
  if (Status st = config::finish_log_buffering(n, log.buffering, log.syslog != nullptr); !st) return st;
  if (log.path_template && log.buffering.size) return node_error(n, "buffered logs cannot have variables in name");
  st.access_logs.push_back(std::move(log));
  return Ok{};
}

// listen ADDR:PORT [udp] [ssl] [reuseport] [backlog=N] [so_keepalive=..] [proxy_protocol]...
// read by the http reader once the parameters stream does not have are
// refused with nginx's words; `udp` is stream's own.
Status set_listen(StreamCompiler& sc, Scope& s, const Node& n) {
  Node line = n;
  line.args.clear();
  bool udp = false;
  for (size_t i = 0; i < n.args.size(); ++i) {
    std::string_view a = n.args[i];
    if (i > 0 && (a == "default_server" || a == "default" || a == "http2" || a == "quic" || a == "deferred"))
      return node_error(n, "invalid parameter " + q(a));
    if (i > 0 && a == "udp") {
      udp = true;
      continue;
    }
    line.args.push_back(n.args[i]);
  }
  config::Server scratch;
  config::Scope probe;
  probe.ctx = config::kServer;
  probe.server = &scratch;
  probe.settings = &scratch.settings;
  auto st = config::find_directive("listen")->set(sc.base(), probe, line);
  if (!st) return st;
  config::Listen l = scratch.listens.back();
  if (udp) {
    // nginx's words for what a datagram socket cannot have.
    auto incompatible = [&](std::string_view what) {
      return node_error(n, "\"listen\" directive \"" + std::string(what) + "\" parameter is incompatible with \"udp\"");
    };
    for (const auto& a : line.args) {
      if (std::string_view(a).starts_with("backlog=")) return incompatible("backlog");
      if (std::string_view(a).starts_with("fastopen=")) return incompatible("fastopen");
    }
    if (l.ssl) return incompatible("ssl");
    if (l.so_keepalive >= 0) return incompatible("so_keepalive");
    if (l.proxy_protocol) return incompatible("proxy_protocol");
    l.udp = true;
  }
  for (const auto& have : s.server->listens) {
    if (have.text == l.text && have.udp == l.udp)
      return node_error(n, "duplicate \"" + have.text + "\" address and port pair");
  }
  s.server->listens.push_back(std::move(l));
  return Ok{};
}

Status set_proxy_pass(StreamCompiler& sc, Scope& s, const Node& n) {
  if (s.server->return_value) return node_error(n, "\"proxy_pass\" directive is duplicate");
  const std::string& target = n.args[0];
  if (target.find('$') != std::string::npos) {
    auto t = sc.compile(n, target);
    if (!t) return Error{t.error()};
    s.server->pass_template = std::move(*t);
    return Ok{};
  }
  auto g = sc.group_for(n, target);
  if (!g) return Error{g.error()};
  s.server->pass = std::move(*g);
  return Ok{};
}

Status set_return(StreamCompiler& sc, Scope& s, const Node& n) {
  if (s.server->pass || s.server->pass_template) return node_error(n, "\"return\" directive is duplicate");
  auto t = sc.compile(n, n.args[0]);
  if (!t) return Error{t.error()};
  s.server->return_value = std::move(*t);
  return Ok{};
}

Status set_set(StreamCompiler& sc, Scope& s, const Node& n) {
  std::string_view name = n.args[0];
  if (name.size() < 2 || name[0] != '$') return node_error(n, "invalid variable name " + q(name));
  SetStep step;
  step.slot = sc.names().define(name.substr(1));
  auto t = sc.compile(n, n.args[1]);
  if (!t) return Error{t.error()};
  step.value = std::move(*t);
  s.server->sets.push_back(std::move(step));
  return Ok{};
}

Status accept_any(StreamCompiler&, Scope&, const Node&) { return Ok{}; }

Status set_proxy_protocol_timeout(StreamCompiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!config::parse_time_ms(n.args[0], ms)) return slot_invalid(n);
  s.settings->proxy_protocol_timeout = Ms(ms);
  return Ok{};
}

// ssl_* and proxy_ssl_*: the http module's own setter on this level's twin.
Status set_http_tls(StreamCompiler& sc, Scope& s, const Node& n) {
  config::Scope probe;
  probe.ctx = config::kServer;
  probe.server = s.twin;
  probe.settings = &s.twin->settings;
  return config::find_directive(n.name)->set(sc.base(), probe, n);
}

// ssl_alpn PROTOCOL...: what the server offers, in its order of preference.
Status set_alpn(StreamCompiler&, Scope& s, const Node& n) {
  std::string wire;
  for (const auto& p : n.args) {
    if (p.empty() || p.size() > 255) return node_error(n, "invalid value " + q(p) + " in \"ssl_alpn\" directive");
    wire.push_back(char(p.size()));
    wire += p;
  }
  s.settings->alpn = std::move(wire);
  return Ok{};
}

// proxy_ssl_name may name stream variables ($ssl_preread_server_name).
Status set_proxy_ssl_name(StreamCompiler& sc, Scope& s, const Node& n) {
  auto t = sc.compile(n, n.args[0]);
  if (!t) return Error{t.error()};
  s.settings->proxy_ssl_name = std::move(*t);
  return Ok{};
}

// geoip_country, geoip_org, geoip_city FILE [utf8] (stream block only).
Status set_geoip(StreamCompiler& sc, Scope&, const Node& n) {
  auto db = config::open_geoip_database(n);
  if (!db) return Error{db.error()};
  auto& slot = sc.out().geoip;
  auto g = slot ? std::make_shared<config::GeoIpConfig>(*slot) : std::make_shared<config::GeoIpConfig>();
  switch ((*db)->kind()) {
    case geoip::Kind::country: g->country = *db; break;
    case geoip::Kind::org: g->org = *db; break;
    case geoip::Kind::city: g->city = *db; break;
  }
  slot = std::move(g);
  return Ok{};
}

constexpr size_t kMany = 64;

const Directive kDirectives[] = {
    {"proxy_connect_timeout", kBoth, 1, 1, false, true, &set_time<&Settings::connect_timeout>},
    {"proxy_timeout", kBoth, 1, 1, false, true, &set_time<&Settings::timeout>},
    {"proxy_next_upstream", kBoth, 1, 1, true, true, &set_flag<&Settings::next_upstream>},
    {"proxy_next_upstream_tries", kBoth, 1, 1, false, true, &set_tries},
    {"proxy_next_upstream_timeout", kBoth, 1, 1, false, true, &set_time<&Settings::next_upstream_timeout>},
    {"proxy_buffer_size", kBoth, 1, 1, false, true, &set_size<&Settings::buffer_size>},
    {"limit_conn_zone", kStream, 2, 2, false, false, &accept_any},  // read first, by run()
    {"limit_conn", kBoth, 2, 2, false, false, &set_limit_conn},
    {"limit_conn_log_level", kBoth, 1, 1, false, true, &set_conn_log_level},
    {"limit_conn_dry_run", kBoth, 1, 1, true, true, &set_flag<&Settings::conn_dry_run>},
    {"proxy_requests", kBoth, 1, 1, false, true, &set_requests},
    {"proxy_responses", kBoth, 1, 1, false, true, &set_responses},
    {"proxy_upload_rate", kBoth, 1, 1, false, true, &set_rate<&Settings::upload_rate>},
    {"proxy_download_rate", kBoth, 1, 1, false, true, &set_rate<&Settings::download_rate>},
    {"proxy_protocol", kBoth, 1, 1, true, true, &set_flag<&Settings::proxy_protocol>},
    {"proxy_half_close", kBoth, 1, 1, true, true, &set_flag<&Settings::half_close>},
    {"proxy_bind", kBoth, 1, 2, false, true, &set_bind},
    {"proxy_socket_keepalive", kBoth, 1, 1, true, true, &set_flag<&Settings::socket_keepalive>},
    {"tcp_nodelay", kBoth, 1, 1, true, true, &set_flag<&Settings::tcp_nodelay>},
    {"preread_buffer_size", kBoth, 1, 1, false, true, &set_size<&Settings::preread_buffer_size>},
    {"preread_timeout", kBoth, 1, 1, false, true, &set_time<&Settings::preread_timeout>},
    {"resolver", kBoth, 1, kMany, false, true, &set_resolver},
    {"resolver_timeout", kBoth, 1, 1, false, true, &set_resolver_timeout},
    {"error_log", kBoth, 1, 2, false, false, &set_error_log},
    {"access_log", kBoth, 1, kMany, false, false, &set_access_log},
    {"allow", kBoth, 1, 1, false, false, &set_access_rule},
    {"set_real_ip_from", kBoth, 1, 1, false, false, &set_real_ip_from},
    {"deny", kBoth, 1, 1, false, false, &set_access_rule},
    {"log_format", kStream, 2, kMany, false, false, &set_log_format},
    {"geoip_country", kStream, 1, 2, false, true, &set_geoip},
    {"geoip_org", kStream, 1, 2, false, true, &set_geoip},
    {"geoip_city", kStream, 1, 2, false, true, &set_geoip},
    {"variables_hash_max_size", kStream, 1, 1, false, true, &accept_any},
    {"variables_hash_bucket_size", kStream, 1, 1, false, true, &accept_any},
    {"server_names_hash_max_size", kStream, 1, 1, false, true, &accept_any},
    {"server_names_hash_bucket_size", kStream, 1, 1, false, true, &accept_any},
    {"listen", kServer, 1, kMany, false, false, &set_listen},
    {"proxy_pass", kServer, 1, 1, false, true, &set_proxy_pass},
    {"return", kServer, 1, 1, false, true, &set_return},
    {"set", kServer, 2, 2, false, false, &set_set},
    {"proxy_protocol_timeout", kBoth, 1, 1, false, true, &set_proxy_protocol_timeout},
    {"ssl_preread", kBoth, 1, 1, true, true, &set_flag<&Settings::ssl_preread>},
    {"ssl_handshake_timeout", kBoth, 1, 1, false, true, &set_time<&Settings::ssl_handshake_timeout>},
    {"ssl_alpn", kBoth, 1, kMany, false, true, &set_alpn},
    {"ssl_certificate", kBoth, 1, 1, false, false, &set_http_tls},
    {"ssl_certificate_key", kBoth, 1, 1, false, false, &set_http_tls},
    {"ssl_password_file", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_protocols", kBoth, 1, kMany, false, true, &set_http_tls},
    {"ssl_ciphers", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_prefer_server_ciphers", kBoth, 1, 1, true, true, &set_http_tls},
    {"ssl_dhparam", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_ecdh_curve", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_session_cache", kBoth, 1, 2, false, true, &set_http_tls},
    {"ssl_session_timeout", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_session_tickets", kBoth, 1, 1, true, true, &set_http_tls},
    {"ssl_session_ticket_key", kBoth, 1, 1, false, false, &set_http_tls},
    {"ssl_verify_client", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_verify_depth", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_client_certificate", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_trusted_certificate", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_crl", kBoth, 1, 1, false, true, &set_http_tls},
    {"ssl_conf_command", kBoth, 2, 2, false, false, &set_http_tls},
    {"proxy_ssl", kBoth, 1, 1, true, true, &set_flag<&Settings::proxy_ssl>},
    {"proxy_ssl_verify", kBoth, 1, 1, true, true, &set_http_tls},
    {"proxy_ssl_verify_depth", kBoth, 1, 1, false, true, &set_http_tls},
    {"proxy_ssl_trusted_certificate", kBoth, 1, 1, false, true, &set_http_tls},
    {"proxy_ssl_crl", kBoth, 1, 1, false, true, &set_http_tls},
    {"proxy_ssl_server_name", kBoth, 1, 1, true, true, &set_http_tls},
    {"proxy_ssl_name", kBoth, 1, 1, false, true, &set_proxy_ssl_name},
    {"proxy_ssl_protocols", kBoth, 1, kMany, false, true, &set_http_tls},
    {"proxy_ssl_ciphers", kBoth, 1, 1, false, true, &set_http_tls},
    {"proxy_ssl_certificate", kBoth, 1, 1, false, true, &set_http_tls},
    {"proxy_ssl_certificate_key", kBoth, 1, 1, false, true, &set_http_tls},
    {"proxy_ssl_password_file", kBoth, 1, 1, false, true, &set_http_tls},
    {"proxy_ssl_session_reuse", kBoth, 1, 1, true, true, &set_http_tls},
    {"proxy_ssl_conf_command", kBoth, 2, 2, false, false, &set_http_tls},
};

// nginx stream directives torii has not got yet: refused by name.
constexpr std::string_view kNotYet[] = {
    "pass", "js_import", "js_set", "server_name", "proxy_socket_rcvbuf",
    "proxy_socket_sndbuf",
};

const Directive* find(std::string_view name) {
  for (const auto& d : kDirectives)
    if (d.name == name) return &d;
  return nullptr;
}

Status check(const Node& n, const Directive& d) {
  if (n.block) return node_error(n, "directive " + q(n.name) + " is not terminated by \";\"");
  if (n.args.size() < d.min_args || n.args.size() > d.max_args)
    return node_error(n, "invalid number of arguments in " + q(n.name) + " directive");
  if (d.flag && n.args[0] != "on" && n.args[0] != "off")
    return node_error(n, "invalid value " + q(n.args[0]) + " in " + q(n.name) + " directive, it must be \"on\" or \"off\"");
  return Ok{};
}

// The error for a name this table does not have at this level.
Error refusal(const Node& n, Where where) {
  if (const Directive* d = find(n.name); d && !(d->where & where))
    return node_error(n, q(n.name) + " directive is not allowed here");
  if ((n.name == "server" || n.name == "upstream" || n.name == "map" || n.name == "split_clients" ||
       n.name == "geo" || n.name == "geoip2") && where == kServer)
    return node_error(n, q(n.name) + " directive is not allowed here");
  if (std::find(std::begin(kNotYet), std::end(kNotYet), n.name) != std::end(kNotYet))
    return node_error(n, q(n.name) + " directive is not yet supported in stream");
  if (config::find_directive(n.name)) return node_error(n, q(n.name) + " directive is not allowed here");
  return node_error(n, config::missing_directive_message(n.name));
}

Status StreamCompiler::block(const std::vector<Node>& nodes, Scope& scope, Where where) {
  for (const auto& n : nodes) {
    if (where == kStream && (n.name == "server" || n.name == "upstream" || n.name == "log_format" || n.name == "map" ||
                             n.name == "split_clients" || n.name == "geo" || n.name == "geoip2"))
      continue;
    const Directive* d = find(n.name);
    if (!d || !(d->where & where)) return refusal(n, where);
    if (auto st = check(n, *d); !st) return st;
    if (d->unique) {
      if (std::find(scope.seen.begin(), scope.seen.end(), d->name) != scope.seen.end())
        return node_error(n, q(n.name) + " directive is duplicate");
      scope.seen.push_back(d->name);
    }
    if (auto st = d->set(*this, scope, n); !st) return st;
  }
  return Ok{};
}

Status StreamCompiler::upstream(const Node& n) {
  if (!n.block) return node_error(n, "directive \"upstream\" has no opening \"{\"");
  if (n.args.size() != 1) return node_error(n, "invalid number of arguments in \"upstream\" directive");
  for (const auto& u : out_.upstreams)
    if (!u->group->implicit && u->group->name == n.args[0]) return node_error(n, "duplicate upstream " + q(n.args[0]));
  auto up = std::make_shared<Upstream>();
  auto g = std::make_shared<config::UpstreamGroupConfig>();
  g->name = n.args[0];
  g->file = n.file ? *n.file : std::string();
  g->line = n.line;
  using B = config::UpstreamGroupConfig::Balancer;
  bool balancer_set = false;
  auto balancer = [&](const Node& d, B b, size_t lo, size_t hi) -> Status {
    if (d.block) return node_error(d, "directive " + q(d.name) + " is not terminated by \";\"");
    if (d.args.size() < lo || d.args.size() > hi)
      return node_error(d, "invalid number of arguments in " + q(d.name) + " directive");
    if (balancer_set) return node_error(d, "load balancing method redefined");
    balancer_set = true;
    g->balancer = b;
    return Ok{};
  };
  for (const auto& d : n.children) {
    Status st = Ok{};
    if (d.name == "server") {
      if (d.block || d.args.empty()) return node_error(d, "invalid number of arguments in \"server\" directive");
      // Stream has no default port.
      std::string_view a = d.args[0];
      const size_t bracket = a.rfind(']');
      const size_t colon = a.rfind(':');
      if (colon == std::string_view::npos || (bracket != std::string_view::npos && colon < bracket))
        return node_error(d, "no port in upstream " + q(a));
      st = config::upstream_server(*g, d);
    } else if (d.name == "hash") {
      st = balancer(d, B::hash, 1, 2);
      if (st) {
        auto t = compile(d, d.args[0]);
        if (!t) return Error{t.error()};
        up->hash_key = std::move(*t);
        if (d.args.size() == 2) {
          if (d.args[1] != "consistent") return node_error(d, "invalid parameter " + q(d.args[1]));
          g->consistent = true;
        }
      }
    } else if (d.name == "least_conn") {
      st = balancer(d, B::least_conn, 0, 0);
    } else if (d.name == "random") {
      st = balancer(d, B::random, 0, 2);
      if (st && !d.args.empty()) {
        if (d.args[0] != "two") return node_error(d, "invalid parameter " + q(d.args[0]));
        if (d.args.size() == 2 && d.args[1] != "least_conn") return node_error(d, "invalid parameter " + q(d.args[1]));
        g->random_two = true;
      }
    } else if (d.name == "zone") {
      // Per-worker state, as the http side: accepted for configs that share it.
      if (d.args.empty() || d.args.size() > 2) return node_error(d, "invalid number of arguments in \"zone\" directive");
      g->zone = true;
    } else if (config::find_directive(d.name) || d.name == "ip_hash" || d.name == "keepalive") {
      return node_error(d, q(d.name) + " directive is not allowed here");
    } else {
      return node_error(d, config::missing_directive_message(d.name));
    }
    if (!st) return st;
  }
  if (!g->resolves.empty()) return node_error(n, "\"server ... resolve\" is not yet supported in stream");
  if (g->servers.empty()) return node_error(n, "no servers are inside upstream");
  if (std::none_of(g->servers.begin(), g->servers.end(), [](const auto& s) { return !s.backup; }))
    return node_error(n, "no primary servers are inside upstream");
  if (g->balancer != B::round_robin && g->balancer != B::least_conn) {
    for (const auto& s : g->servers)
      if (s.backup) return node_error(n, "backup servers are not allowed with this load balancing method");
  }
  for (size_t i = 0; i < g->servers.size(); ++i) g->servers[i].id = unsigned(i);
  up->group = std::move(g);
  out_.upstreams.push_back(std::move(up));
  return Ok{};
}

Result<std::shared_ptr<const Upstream>> StreamCompiler::group_for(const Node& n, std::string_view target) {
  for (const auto& u : out_.upstreams)
    if (u->group->name == target) return u;
  const size_t bracket = target.rfind(']');
  const size_t colon = target.rfind(':');
  if (colon == std::string_view::npos || (bracket != std::string_view::npos && colon < bracket))
    return node_error(n, "no port in upstream " + q(target));
  auto g = std::make_shared<config::UpstreamGroupConfig>();
  g->name = std::string(target);
  g->implicit = true;
  Node line = n;
  line.name = "server";
  line.args = {std::string(target)};
  if (auto st = config::upstream_server(*g, line); !st) return Error{st.error()};
  for (size_t i = 0; i < g->servers.size(); ++i) g->servers[i].id = unsigned(i);
  auto up = std::make_shared<Upstream>();
  up->group = std::move(g);
  out_.upstreams.push_back(up);
  return std::shared_ptr<const Upstream>(up);
}

// map $source $name { ... }: http's table and lookup, stream templates.
Status StreamCompiler::map(const Node& n) {
  if (!n.block) return node_error(n, "directive \"map\" has no opening \"{\"");
  if (n.args.size() != 2) return node_error(n, "invalid number of arguments in \"map\" directive");
  auto m = std::make_shared<Map>();
  auto src = compile(n, n.args[0]);
  if (!src) return Error{src.error()};
  m->source = std::move(*src);
  std::string_view var = n.args[1];
  if (var.size() < 2 || var[0] != '$') return node_error(n, "invalid variable name " + q(var));
  m->name = std::string(var.substr(1));
  uint32_t index = 0;
  // A map of a module's variable is refused; of another map's, the later wins (nginx's rules).
  uint32_t split = 0;
  if (is_builtin_variable(m->name) || names_.find_split(m->name, split) || names_.find_geo(m->name, split) ||
      !names_.find_map(m->name, index))
    return node_error(n, "the duplicate " + q(m->name) + " variable");
  auto lines = config::read_map_lines(n, *m, [this](const Node& d, std::string_view text,
                                                   const config::Regex* key) -> Result<Template> {
    // A regex line's value may read its named groups.
    NamedGroups groups;
    if (key)
      for (const auto& [group, slot] : key->named()) groups.emplace_back(config::user_variable_names()[slot], group);
    return compile(d, text, &groups);
  });
  if (!lines) return lines;
  out_.maps[index] = std::move(m);
  return Ok{};
}

// split_clients STRING $name { PERCENT% VALUE; ... * VALUE; }: http's
// parts and hash, a stream template for the string.
Status StreamCompiler::split_clients(const Node& n) {
  if (!n.block) return node_error(n, "directive \"split_clients\" has no opening \"{\"");
  if (n.args.size() != 2) return node_error(n, "invalid number of arguments in \"split_clients\" directive");
  auto sc = std::make_shared<SplitClients>();
  auto key = compile(n, n.args[0]);
  if (!key) return Error{key.error()};
  sc->key = std::move(*key);
  std::string_view var = n.args[1];
  if (var.size() < 2 || var[0] != '$') return node_error(n, "invalid variable name " + q(var));
  sc->name = std::string(var.substr(1));
  // A module's variable is refused; of another split_clients, the later
  // wins (nginx's changeable variables).
  uint32_t index = 0, other = 0;
  if (is_builtin_variable(sc->name) || names_.find_map(sc->name, other) || names_.find_geo(sc->name, other) ||
      !names_.find_split(sc->name, index))
    return node_error(n, "the duplicate " + q(sc->name) + " variable");
  if (auto st = ::torii::split_clients::read_split_parts(n, sc->parts); !st) return st;
  out_.split_clients[index] = std::move(sc);
  return Ok{};
}

// geo [$address] $name { NETWORK VALUE; ... }: http's tables and reader,
// looked up with the client's address or what the template renders.
Status StreamCompiler::geo(const Node& n) {
  if (!n.block) return node_error(n, "directive \"geo\" has no opening \"{\"");
  if (n.args.empty() || n.args.size() > 2) return node_error(n, "invalid number of arguments in \"geo\" directive");
  auto g = std::make_shared<Geo>();
  std::string_view var = n.args.back();
  if (var.size() < 2 || var[0] != '$') return node_error(n, "invalid variable name " + q(var));
  g->name = std::string(var.substr(1));
  if (n.args.size() == 2) {
    if (n.args[0].size() < 2 || n.args[0][0] != '$') return node_error(n, "invalid variable name " + q(n.args[0]));
    auto t = compile(n, n.args[0]);
    if (!t) return Error{t.error()};
    g->source = std::move(*t);
  }
  // A module's variable is refused; of another geo, the later wins.
  uint32_t index = 0, other = 0;
  if (is_builtin_variable(g->name) || names_.find_map(g->name, other) || names_.find_split(g->name, other) ||
      !names_.find_geo(g->name, index))
    return node_error(n, "the duplicate " + q(g->name) + " variable");
  auto table = std::make_shared<config::GeoConfig>();
  table->name = g->name;
  if (auto st = ::torii::geo::read_geo_block(c_, n, *table, false); !st) return st;
  g->table = std::move(table);
  out_.geos[index] = std::move(g);
  return Ok{};
}

// geoip2 FILE { $name [default=V] [source=$v] KEY...; auto_reload T; }:
// http's block reader; source= is a stream template. Of two lines of one
// name, the later wins, as in http.
Status StreamCompiler::geoip2(const Node& n) {
  if (!n.block) return node_error(n, "directive \"geoip2\" has no opening \"{\"");
  if (n.args.size() != 1) return node_error(n, "invalid number of arguments in \"geoip2\" directive");
  std::vector<::torii::geoip2::Lookup> lookups;
  if (auto st = ::torii::geoip2::read_geoip2_block(c_, n, out_.geoip2_databases, lookups); !st) return st;
  for (auto& l : lookups) {
    auto v = std::make_shared<Geoip2>();
    if (!l.source.empty()) {
      auto t = compile(n, l.source);
      if (!t) return Error{t.error()};
      v->source = std::move(*t);
    }
    uint32_t index = 0, other = 0;
    if (is_builtin_variable(l.name) || names_.find_map(l.name, other) || names_.find_split(l.name, other) ||
        names_.find_geo(l.name, other) || !names_.find_geoip2(l.name, index))
      return node_error(n, "the duplicate " + q(l.name) + " variable");
    v->lookup = std::move(l);
    out_.geoip2_variables[index] = std::move(v);
  }
  return Ok{};
}

Status StreamCompiler::server(const Settings& inherited, const config::Server& inherited_twin, const Node& n) {
  if (!n.block) return node_error(n, "directive \"server\" has no opening \"{\"");
  if (!n.args.empty()) return node_error(n, "invalid number of arguments in \"server\" directive");
  auto srv = std::make_shared<Server>();
  srv->file = n.file ? *n.file : std::string();
  srv->line = n.line;
  srv->settings = inherited;
  config::Server twin;
  twin.ssl = inherited_twin.ssl;
  twin.settings.proxy = inherited_twin.settings.proxy;
  Scope scope;
  scope.settings = &srv->settings;
  scope.server = srv.get();
  scope.twin = &twin;
  if (auto st = block(n.children, scope, kServer); !st) return st;
  if (srv->listens.empty()) return node_error(n, "no \"listen\" is defined for server in " + srv->file + ":" + std::to_string(srv->line));
  if (!srv->pass && !srv->pass_template && !srv->return_value)
    return node_error(n, "no handler for server in " + srv->file + ":" + std::to_string(srv->line));
  srv->settings.ssl = twin.ssl;
  if (twin.settings.proxy && twin.settings.proxy->tls) srv->settings.proxy_tls = twin.settings.proxy->tls;
  if (auto st = build_tls_contexts(*srv); !st) return st;
  out_.servers.push_back(std::move(srv));
  return Ok{};
}

// As nginx: a server with `listen ... ssl` needs a certificate and key;
// its context (the http module's builder) is made now, so `-t` and a
// reload fail on a bad file. Servers that share settings share a context.
Status StreamCompiler::build_tls_contexts(Server& srv) {
  const std::string where = srv.file + ":" + std::to_string(srv.line);
  const bool ssl_listen = std::any_of(srv.listens.begin(), srv.listens.end(), [](const auto& l) { return l.ssl; });
  if (ssl_listen) {
    const auto& ssl = srv.settings.ssl;
    if (!ssl || ssl->certificates.empty())
      return make_error("no \"ssl_certificate\" is defined for the \"listen ... ssl\" directive in " + where);
    if (ssl->certificate_keys.empty())
      return make_error("no \"ssl_certificate_key\" is defined for the \"listen ... ssl\" directive in " + where);
    auto it = built_.find(ssl.get());
    if (it == built_.end()) {
      auto ctx = net::build_tls_context(*ssl);
      if (!ctx) return Error{ctx.error()};
      auto with_ctx = std::make_shared<config::SslServerConfig>(*ssl);
      with_ctx->ctx = std::move(*ctx);
      it = built_.emplace(ssl.get(), Built{ssl, std::move(with_ctx)}).first;
    }
    srv.settings.ssl = it->second.with_context;
  }
  if (srv.settings.proxy_ssl) {
    if (!srv.settings.proxy_tls) {
      auto t = std::make_shared<config::UpstreamTlsConfig>();
      t->directive = "proxy_ssl";
      srv.settings.proxy_tls = std::move(t);
    }
    const auto& t = *srv.settings.proxy_tls;
    if (!t.ctx) {
      auto ctx = net::build_upstream_tls_context(t);
      if (!ctx) return Error{ctx.error()};
      t.ctx = std::move(*ctx);
    }
  }
  return Ok{};
}

Status StreamCompiler::build_listen_groups() {
  for (const auto& srv : out_.servers) {
    for (const auto& l : srv->listens) {
      for (const auto& g : out_.listen_groups)
        if (g.listen.text == l.text && g.listen.udp == l.udp)
          return make_error(srv->file + ":" + std::to_string(srv->line) + ": duplicate \"" + l.text +
                            "\" address and port pair");
      ListenGroup g;
      g.listen = l;
      g.server = srv;
      out_.listen_groups.push_back(std::move(g));
    }
  }
  return Ok{};
}

Status StreamCompiler::run(const Node& stream) {
  // `set` and `map` names first, so a template may read one defined further down.
  for (const auto& srv : stream.children) {
    if (srv.name != "server") continue;
    for (const auto& d : srv.children)
      if (d.name == "set" && !d.args.empty() && d.args[0].size() > 1 && d.args[0][0] == '$')
        names_.define(std::string_view(d.args[0]).substr(1));
  }
  for (const auto& n : stream.children) {
    if (n.name != "map" || n.args.size() != 2 || n.args[1].size() < 2 || n.args[1][0] != '$') continue;
    names_.define_map(std::string_view(n.args[1]).substr(1));
  }
  for (const auto& n : stream.children) {
    if (n.name != "split_clients" || n.args.size() != 2 || n.args[1].size() < 2 || n.args[1][0] != '$') continue;
    names_.define_split(std::string_view(n.args[1]).substr(1));
  }
  out_.maps.resize(names_.map_count());
  for (const auto& n : stream.children) {
    if (n.name != "geo" || n.args.empty() || n.args.back().size() < 2 || n.args.back()[0] != '$') continue;
    names_.define_geo(std::string_view(n.args.back()).substr(1));
  }
  for (const auto& n : stream.children) {
    if (n.name != "geoip2") continue;
    for (const auto& line : n.children)
      if (line.name.size() > 1 && line.name[0] == '$') names_.define_geoip2(std::string_view(line.name).substr(1));
  }
  out_.split_clients.resize(names_.split_count());
  out_.geos.resize(names_.geo_count());
  out_.geoip2_variables.resize(names_.geoip2_count());
  for (const auto& n : stream.children) {
    if (n.name != "geoip2") continue;
    if (auto st = geoip2(n); !st) return st;
  }
  for (const auto& n : stream.children) {
    if (n.name != "geo") continue;
    if (auto st = geo(n); !st) return st;
  }
  for (const auto& n : stream.children) {
    if (n.name != "split_clients") continue;
    if (auto st = split_clients(n); !st) return st;
  }
  for (const auto& n : stream.children) {
    if (n.name != "map") continue;
    if (auto st = map(n); !st) return st;
  }
  Scope top;
  Settings settings;
  config::Server twin;
  top.settings = &settings;
  top.twin = &twin;
  for (const auto& n : stream.children) {
    if (n.name != "log_format") continue;
    if (auto st = check(n, *find("log_format")); !st) return st;
    if (auto st = set_log_format(*this, top, n); !st) return st;
  }
  for (const auto& n : stream.children) {
    if (n.name != "limit_conn_zone") continue;
    if (auto st = check(n, *find("limit_conn_zone")); !st) return st;
    if (auto st = set_limit_conn_zone(*this, top, n); !st) return st;
  }
  for (const auto& n : stream.children) {
    if (n.name != "upstream") continue;
    if (auto st = upstream(n); !st) return st;
  }
  if (auto st = block(stream.children, top, kStream); !st) return st;
  for (const auto& n : stream.children) {
    if (n.name != "server") continue;
    if (auto st = server(settings, twin, n); !st) return st;
  }
  out_.variables = names_.names();
  return build_listen_groups();
}

Status set_stream(Compiler& c, config::Scope&, const Node& n) {
  if (c.cfg().stream) return node_error(n, "\"stream\" directive is duplicate");
  auto out = std::make_shared<StreamConfig>();
  StreamCompiler sc(c, *out);
  if (auto st = sc.run(n); !st) return st;
  c.cfg().stream = std::move(out);
  return Ok{};
}

// The block's children are checked by the stream compiler, not the http
// table: kUpstream as the inner context tells the validator so.
constexpr config::DirectiveSpec kStreamDirectives[] = {
    {"stream", config::kMain, config::kArgs0 | config::kBlock, true, false, config::kUpstream, &set_stream},
};

}  // namespace

Status check_listen_addresses(const config::Config& cfg) {
  if (!cfg.stream) return Ok{};
  for (const auto& sg : cfg.stream->listen_groups) {
    for (const auto& hg : cfg.listen_groups) {
      // Both would get SO_REUSEPORT sockets and share the connections (or
      // the datagrams: QUIC and stream's udp).
      const bool same_kind = sg.listen.udp ? (hg.listen.quic || hg.udp) : !hg.listen.quic;
      if (same_kind && hg.listen.text == sg.listen.text)
        return make_error(sg.server->file + ":" + std::to_string(sg.server->line) + ": \"" + sg.listen.text +
                          "\" is an http and a stream listen address");
    }
  }
  return Ok{};
}

}  // namespace torii::stream

namespace torii::config {
std::span<const DirectiveSpec> stream_directives() { return stream::kStreamDirectives; }
}  // namespace torii::config
