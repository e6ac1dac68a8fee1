// config::load(): files -> syntax tree -> typed Config. The walk over blocks
// lives here; what each directive does lives in directives.cc.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "config/directives.h"
#include "core/quote.h"
#include "config/loader.h"
#include "config/nginx_directives.h"
#include "config/parser.h"
#include "config/regex.h"
#include "config/ssl_config.h"
#include "config/upstream_tls_config.h"
#include "log/json_format.h"
#include "stream/compile.h"

namespace torii::config {

namespace {

bool arity_ok(uint16_t arity, size_t n) {
  if (arity & kFlag) return n == 1;
  if ((arity & kArgs1More) && n >= 1) return true;
  if ((arity & kArgs2More) && n >= 2) return true;
  if (n <= 4 && (arity & (kArgs0 << n))) return true;
  return false;
}

uint16_t listen_port(const Listen& l) {
  if (l.addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(l.addr).sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6&>(l.addr).sin6_port);
}

bool same_address(const Listen& a, const Listen& b) {
  if (a.addr.ss_family != b.addr.ss_family) return false;
  if (a.addr.ss_family == AF_UNIX) return a.text == b.text;  // "unix:PATH"
  if (a.addr.ss_family == AF_INET) {
    const auto& x = reinterpret_cast<const sockaddr_in&>(a.addr);
    const auto& y = reinterpret_cast<const sockaddr_in&>(b.addr);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  const auto& x = reinterpret_cast<const sockaddr_in6&>(a.addr);
  const auto& y = reinterpret_cast<const sockaddr_in6&>(b.addr);
  return x.sin6_port == y.sin6_port && std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0;
}

// Where nginx takes a second line in one block as more values and not as a
// duplicate: its bitmask and type-list directives (ngx_conf_set_bitmask_slot,
// ngx_http_types_slot) and ssl_session_cache. certbot's
// options-ssl-nginx.conf, included beside a site's own ssl_protocols and
// ssl_session_cache, depends on it.
bool repeat_adds_values(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "ssl_protocols",         "ssl_session_cache",       "proxy_ssl_protocols",    "grpc_ssl_protocols",
      "uwsgi_ssl_protocols",   "gzip_proxied",            "keepalive_disable",      "dav_methods",
      "userid_flags",          "charset_types",           "gzip_types",             "ssi_types",
      "sub_filter_types",      "addition_types",          "xslt_types",             "proxy_next_upstream",
      "fastcgi_next_upstream", "uwsgi_next_upstream",     "scgi_next_upstream",     "grpc_next_upstream",
      "memcached_next_upstream", "proxy_cache_use_stale", "fastcgi_cache_use_stale", "uwsgi_cache_use_stale",
      "scgi_cache_use_stale",  "proxy_ignore_headers",    "fastcgi_ignore_headers", "uwsgi_ignore_headers",
      "scgi_ignore_headers",   "grpc_ignore_headers",     "proxy_cache_methods",    "fastcgi_cache_methods",
      "uwsgi_cache_methods",   "scgi_cache_methods",
  };
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

Listen default_listen() {
  Listen l;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(80);
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  std::memcpy(&l.addr, &sa, sizeof sa);
  l.addr_len = sizeof sa;
  l.text = "0.0.0.0:80";
  return l;
}

// Settings that nginx never carries into a child block (rewrite-phase
// return, try_files and limit_except belong to the block that wrote them).
void reset_uninherited(LocationSettings& s) {
  s.rewrite.reset();
  s.try_files.clear();
  s.limit_except.reset();
  s.empty_gif = false;  // a content handler, as nginx's clcf->handler
  s.cache_purge_location.reset();  // likewise
  s.pseudo_streaming = PseudoStreaming::off;  // flv, mp4: likewise
  reset_uninherited_proxy(s);
  reset_uninherited_cgi(s);
}

bool is_static(Location::Match m) {
  return m == Location::Match::exact || m == Location::Match::prefix || m == Location::Match::prefix_no_regex;
}

// A block of its own with proxy_pass, fastcgi_pass... (not one inherited,
// nor one inside an `if`): nginx sets auto_redirect on such a location.
bool passes_upstream(const std::vector<Node>& directives) {
  static constexpr std::string_view kPasses[] = {"proxy_pass", "fastcgi_pass", "uwsgi_pass",
                                                 "scgi_pass",  "memcached_pass", "grpc_pass"};
  for (const auto& d : directives)
    for (std::string_view p : kPasses)
      if (d.name == p) return true;
  return false;
}

// nginx's built-in table when no "types" block is given.
MimeTypes builtin_types() {
  return {{"html", "text/html"}, {"gif", "image/gif"}, {"jpg", "image/jpeg"}};
}

const char* kCombined =
    "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent "
    "\"$http_referer\" \"$http_user_agent\"";

Result<std::shared_ptr<const Config>> compile_all(std::shared_ptr<Config> cfg,
                                                  Result<std::vector<Node>> nodes, Parser& parser,
                                                  const std::string& extra) {
  if (!nodes) return Error{nodes.error()};
  if (!extra.empty()) {
    auto more = parser.parse_text("command line", extra);
    if (!more) return Error{more.error()};
    for (auto& n : *more) nodes->push_back(std::move(n));
  }
  Compiler c(*cfg, load_warnings());
  auto st = c.run(*nodes);
  if (!st) return Error{st.error()};
  return std::shared_ptr<const Config>(std::move(cfg));
}

std::shared_ptr<Config> new_config(const std::string& prefix) {
  auto cfg = std::make_shared<Config>();
  cfg->prefix = prefix;
  if (!cfg->prefix.empty() && cfg->prefix.back() != '/') cfg->prefix += '/';
  return cfg;
}

}  // namespace

std::vector<std::string>& load_warnings() {
  static std::vector<std::string> warnings;
  return warnings;
}

Result<std::shared_ptr<const Config>> load(const std::string& path, const std::string& prefix,
                                           const std::string& extra, const std::string& error_log) {
  load_warnings().clear();
  auto cfg = new_config(prefix);
  if (!error_log.empty())
    cfg->error_log.path = error_log == "stderr" || error_log[0] == '/' ? error_log : cfg->prefix + error_log;
  // Like nginx, a relative -c path is relative to the prefix.
  cfg->conf_file = !path.empty() && path[0] == '/' ? path : cfg->prefix + path;
  std::string dir = cfg->conf_file.substr(0, cfg->conf_file.rfind('/') + 1);
  Parser parser(dir, &cfg->sources);
  auto nodes = parser.parse_file(cfg->conf_file);
  return compile_all(std::move(cfg), std::move(nodes), parser, extra);
}

Result<std::shared_ptr<const Config>> load_from_string(std::string_view text, const std::string& prefix,
                                                       bool allow_include, const std::string& name) {
  load_warnings().clear();
  auto cfg = new_config(prefix);
  cfg->conf_file = name;
  Parser parser(cfg->prefix, &cfg->sources, allow_include);
  cfg->sources.emplace_back(name, std::string(text));
  auto nodes = parser.parse_text(name, text);
  return compile_all(std::move(cfg), std::move(nodes), parser, "");
}

// ---- Compiler ------------------------------------------------------------------

std::string Compiler::full_path(std::string_view p) const {
  if (!p.empty() && p[0] == '/') return std::string(p);
  return cfg_.prefix + std::string(p);
}

void Compiler::warn(const Node& n, const std::string& message) { warnings_.push_back(n.where() + message); }

const std::shared_ptr<const MimeTypes>& Compiler::default_types() {
  if (!default_types_) default_types_ = std::make_shared<const MimeTypes>(builtin_types());
  return default_types_;
}

Status Compiler::run(const std::vector<Node>& main) {
  clear_defined_variables();  // map {} names belong to the config being compiled
  cfg_.pid_path = full_path("logs/torii.pid");
  if (cfg_.error_log.path.empty()) cfg_.error_log.path = full_path("logs/error.log");  // else -e's
  auto combined = std::make_shared<LogFormat>();
  combined->name = "combined";
  combined->format = *compile_template(kCombined);
  cfg_.log_formats["combined"] = std::move(combined);
  cfg_.log_formats["json"] = log::builtin_json_format();

  auto st = validate(main, kMain);
  if (!st) return st;
  st = define_rewrite_variables(main);
  if (!st) return st;
  // The userid module's $uid_reset exists in every config, as nginx's:
  // empty until a `set` writes it (directives_userid.cc finds its slot).
  define_user_variable("uid_reset");
  declare_block_variables(main);
  Scope scope;
  scope.ctx = kMain;
  st = block(main, scope);
  if (!st) return st;
  if (!declarations_kept()) return make_error("variables declared ahead of their map, geo or split_clients block "
                                              "were not defined as declared");
  st = build_listen_groups();
  if (!st) return st;
  st = stream::check_listen_addresses(cfg_);
  if (!st) return st;
  cfg_.variables = user_variable_names();
  cfg_.keep_upstream_headers = upstream_headers_used();
  cfg_.keep_upstream_bytes = upstream_bytes_used();
  st = build_ssl_contexts(servers_, cfg_, warnings_);  // certificates are read now: -t names a bad one
  if (!st) return st;
  return build_upstream_tls_contexts(servers_);
}

Status Compiler::validate(const std::vector<Node>& nodes, Context ctx) const {
  for (const auto& n : nodes) {
    if (ctx == kTypes) {
      if (n.block) return node_error(n, "unexpected \"{\"");
      if (n.args.empty()) return node_error(n, "invalid number of arguments in " + q(n.name) + " directive");
      continue;
    }
    const DirectiveSpec* spec = find_directive(n.name);
    if (!spec) return node_error(n, missing_directive_message(n.name));
    if (!(spec->contexts & ctx)) {
      if (ctx == kServerIf || ctx == kLocationIf)
        return node_error(n, q(n.name) + " directive is not allowed inside \"if\"" +
                                 (ctx == kServerIf ? " at server level" : ""));
      return node_error(n, q(n.name) + " directive is not allowed here");
    }
    if ((spec->arity & kBlock) && !n.block) return node_error(n, "directive " + q(n.name) + " has no opening \"{\"");
    if (!(spec->arity & kBlock) && n.block)
      return node_error(n, "directive " + q(n.name) + " is not terminated by \";\"");
    if (!arity_ok(spec->arity, n.args.size()))
      return node_error(n, "invalid number of arguments in " + q(n.name) + " directive");
    if ((spec->arity & kFlag) && n.args[0] != "on" && n.args[0] != "off")
      return node_error(n, "invalid value " + q(n.args[0]) + " in " + q(n.name) +
                               " directive, it must be \"on\" or \"off\"");
    // An upstream's or map's children are checked by its own setter.
    if (n.block && spec->inner != kUpstream) {
      Context inner = spec->inner;
      if (inner == kLocationIf && ctx == kServer) inner = kServerIf;
      auto st = validate(n.children, inner);
      if (!st) return st;
    }
  }
  return Ok{};
}

Status Compiler::block(const std::vector<Node>& nodes, Scope& scope) {
  auto run_one = [&](const Node& n) -> Status {
    if (scope.ctx == kTypes) {
      for (const auto& ext : n.args) {
        std::string e = ext;
        for (auto& ch : e)
          if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
        auto [it, added] = scope.types->try_emplace(e, n.name);
        if (added) continue;
        warn(n, "duplicate extension " + q(e) + ", content type: " + q(n.name) + ", previous content type: " +
                    q(it->second));
        it->second = n.name;
      }
      return Ok{};
    }
    const DirectiveSpec* spec = find_directive(n.name);
    if (!spec) return node_error(n, "unknown directive " + q(n.name));  // validated; defensive
    if (spec->unique) {
      const bool again = std::find(scope.seen.begin(), scope.seen.end(), spec->name) != scope.seen.end();
      if (repeat_adds_values(spec->name)) {
        auto& values = scope.values_so_far[spec->name];
        values.insert(values.end(), n.args.begin(), n.args.end());
        if (again) {
          Node all = n;
          all.args = values;
          return spec->set(*this, scope, all);
        }
      } else if (again) {
        return node_error(n, q(n.name) + " directive is duplicate");
      }
      scope.seen.push_back(spec->name);
    }
    return spec->set(*this, scope, n);
  };

  // log_format first so access_log may name a format defined below it.
  if (scope.ctx == kHttp) {
    for (const auto& n : nodes) {
      if (n.name != "log_format") continue;
      auto st = run_one(n);
      if (!st) return st;
    }
  }
  for (const auto& n : nodes) {
    if (scope.ctx == kHttp && n.name == "log_format") continue;
    const DirectiveSpec* spec = scope.ctx == kTypes ? nullptr : find_directive(n.name);
    if (spec && spec->child_scope) continue;
    auto st = run_one(n);
    if (!st) return st;
  }
  if (scope.ctx == kTypes) return Ok{};
  // Before the `if` blocks (after_plain) and the children copy this block's lists.
  if (scope.settings) finish_field_inheritance(scope);
  for (auto& finish : scope.after_plain) {
    auto st = finish();
    if (!st) return st;
  }
  for (const auto& n : nodes) {
    const DirectiveSpec* spec = find_directive(n.name);
    if (!spec || !spec->child_scope) continue;
    auto st = run_one(n);
    if (!st) return st;
  }
  return Ok{};
}

Status Compiler::http(const Node& n) {
  Server proto;
  proto.settings.root = full_path("html");
  proto.settings.client_body_temp_path = full_path("client_body_temp");
  proto.settings.types = default_types();
  AccessLog log;
  log.path = full_path("logs/access.log");
  log.format = cfg_.log_formats["combined"];
  proto.settings.access_logs.push_back(std::move(log));
  Scope scope;
  scope.ctx = kHttp;
  scope.settings = &proto.settings;
  scope.server = &proto;
  http_children_ = n.children;
  auto st = add_admin_server(*this, http_children_);
  if (!st) return st;
  st = block(http_children_, scope);
  if (!st) return st;
  // nginx makes the default access log where a server inherits no
  // access_log from the http block and sets none of its own.
  if (!scope.access_log_here) {
    const std::string& fallback = proto.settings.access_logs.front().path;
    for (const auto& srv : cfg_.servers)
      for (const auto& l : srv->settings.access_logs)
        if (l.path == fallback) note_access_log_file(cfg_, fallback);
  }
  return finish_upstream_resolvers(cfg_, proto.settings);
}

Status Compiler::server(Scope& parent, const Node& n) {
  auto srv = std::make_shared<Server>(*parent.server);
  srv->file = n.file ? *n.file : std::string();
  srv->line = n.line;
  reset_uninherited(srv->settings);
  Scope scope;
  scope.ctx = kServer;
  scope.settings = &srv->settings;
  scope.server = srv.get();
  auto st = block(n.children, scope);
  if (!st) return st;

  auto& sites = listen_nodes_[srv.get()];
  for (const auto& c : n.children)
    if (c.name == "listen") sites.push_back(&c);
  if (srv->listens.empty()) {
    srv->listens.push_back(default_listen());
    sites.push_back(&n);
  }
  if (srv->names.empty()) srv->names.push_back(ServerName{});  // nginx's implicit ""
  for (auto& l : srv->listens)
    if (l.deferred) l.defer_accept_seconds = int(std::max<int64_t>(srv->client_header_timeout.count() / 1000, 1));
  if (srv->ssl && srv->ssl->ssl_on)
    for (auto& l : srv->listens) l.ssl = true;  // deprecated "ssl on"
  servers_.push_back(srv);
  cfg_.servers.push_back(std::move(srv));
  return Ok{};
}

Status Compiler::location(Scope& parent, const Node& n) {
  Location loc;
  loc.file = n.file ? *n.file : std::string();
  loc.line = n.line;
  using M = Location::Match;
  if (n.args.size() == 2) {
    const auto& mod = n.args[0];
    if (mod == "=") {
      loc.match = M::exact;
    } else if (mod == "~") {
      loc.match = M::regex;
    } else if (mod == "~*") {
      loc.match = M::regex_icase;
    } else if (mod == "^~") {
      loc.match = M::prefix_no_regex;
    } else {
      return node_error(n, "invalid location modifier " + q(mod));
    }
    loc.pattern = n.args[1];
  } else {
    std::string_view a = n.args[0];
    if (a.size() > 1 && a[0] == '=') {
      loc.match = M::exact;
      a.remove_prefix(1);
    } else if (a.size() > 2 && a.substr(0, 2) == "~*") {
      loc.match = M::regex_icase;
      a.remove_prefix(2);
    } else if (a.size() > 1 && a[0] == '~') {
      loc.match = M::regex;
      a.remove_prefix(1);
    } else if (a.size() > 1 && a[0] == '@') {
      loc.match = M::named;
    }
    loc.pattern = std::string(a);
  }
  if (loc.pattern.empty()) return node_error(n, "invalid value \"\" in \"location\" directive");
  if (loc.match == M::regex || loc.match == M::regex_icase) {
    auto re = Regex::compile(loc.pattern, loc.match == M::regex_icase);
    if (!re) return node_error(n, re.error());
    loc.regex = std::move(*re);
  }

  const Location* outer = parent.location;
  if (outer) {
    if (outer->match == M::exact)
      return node_error(n, "location " + q(outer->pattern) + " cannot have inner locations");
    if (outer->match == M::named)
      return node_error(n, "location " + q(loc.pattern) + " could not be inside the named location " +
                               q(outer->pattern));
    if (loc.match == M::named)
      return node_error(n, "named location " + q(loc.pattern) + " can be on the server level only");
    if (loc.regex == nullptr && loc.pattern.compare(0, outer->pattern.size(), outer->pattern) != 0)
      return node_error(n, "location " + q(loc.pattern) + " is outside location " + q(outer->pattern));
  }

  auto& siblings = outer ? parent.location->children : parent.server->locations;
  for (const auto& s : siblings) {
    if (s->pattern != loc.pattern) continue;
    bool dup = (s->match == M::exact && loc.match == M::exact) ||
               (s->match == M::named && loc.match == M::named) ||
               (is_static(s->match) && s->match != M::exact && is_static(loc.match) && loc.match != M::exact);
    if (dup) return node_error(n, "duplicate location " + q(loc.pattern));
  }

  loc.settings = *parent.settings;
  reset_uninherited(loc.settings);
  Scope scope;
  scope.ctx = kLocation;
  scope.settings = &loc.settings;
  scope.location = &loc;
  auto st = block(n.children, scope);
  if (!st) return st;
  loc.auto_redirect = is_static(loc.match) && loc.pattern.back() == '/' && passes_upstream(n.children);
  siblings.push_back(std::make_shared<const Location>(std::move(loc)));
  return Ok{};
}

// Which addresses answer QUIC, and the Alt-Svc each server advertises over
// TCP. nginx answers HTTP/3 only on `quic` listens; torii also does on a
// `listen ... ssl` address whose server says `http3 on` explicitly (the
// form many copied configs use), unless a `quic` listen of that address
// exists already (two UDP sockets would split its datagrams).
void Compiler::mark_quic_groups() {
  auto& groups = cfg_.listen_groups;
  auto quic_group_for = [&](const Listen& l) {
    for (const auto& g : groups)
      if (g.listen.quic && same_address(g.listen, l)) return true;
    return false;
  };
  for (auto& g : groups) {
    if (g.listen.quic) {
      g.udp = true;
      continue;
    }
    // QUIC needs UDP: on a unix socket the servers answer HTTP/1 and HTTP/2 only.
    if (!g.listen.ssl || g.listen.addr.ss_family == AF_UNIX || quic_group_for(g.listen)) continue;
    for (const auto& srv : g.servers)
      if (srv->http3_settings.explicit_on) g.udp = true;
  }
  for (auto& srv : servers_) {
    const auto& h3 = srv->http3_settings;
    if (!h3.enabled || !h3.alt_svc) continue;
    for (const auto& g : groups) {
      if (!g.udp) continue;
      bool member = false;
      for (const auto& s : g.servers) member = member || s.get() == srv.get();
      if (!member || (!g.listen.quic && !h3.explicit_on)) continue;
      srv->alt_svc = "h3=\":" + std::to_string(listen_port(g.listen)) + "\"; ma=86400";
      break;
    }
  }
}

Status Compiler::build_listen_groups() {
  struct GroupInfo {
    const Node* default_site = nullptr;
  };
  std::vector<GroupInfo> info;
  auto& groups = cfg_.listen_groups;
  for (const auto& srv : servers_) {
    const auto& sites = listen_nodes_[srv.get()];
    for (size_t i = 0; i < srv->listens.size(); ++i) {
      const Listen& l = srv->listens[i];
      const Node& site = *sites[std::min(i, sites.size() - 1)];
      size_t g = 0;
      // A `quic` listen is a UDP socket: its own group beside a TCP one of the same address.
      while (g < groups.size() && !(same_address(groups[g].listen, l) && groups[g].listen.quic == l.quic)) ++g;
      if (g == groups.size()) {
        ListenGroup lg;
        lg.listen = l;
        lg.listen.default_server = false;
        groups.push_back(std::move(lg));
        info.emplace_back();
      }
      ListenGroup& lg = groups[g];
      for (const auto& s : lg.servers)
        if (s.get() == srv.get()) return node_error(site, "a duplicate listen " + l.text);
      lg.servers.push_back(srv);
      if (l.reuseport) lg.listen.reuseport = true;
      if (l.backlog != Listen{}.backlog) lg.listen.backlog = l.backlog;
      if (!l.ipv6only) lg.listen.ipv6only = false;
      if (l.ssl) lg.listen.ssl = true;
      if (l.http2) lg.listen.http2 = true;
      if (l.default_server) {
        if (info[g].default_site)
          return node_error(site, "a duplicate default server for " + l.text + " in " + *info[g].default_site->file +
                                      ":" + std::to_string(info[g].default_site->line));
        info[g].default_site = &site;
        lg.default_server = srv;
        lg.listen.default_server = true;
      }
    }
  }
  mark_quic_groups();
  for (auto& lg : groups) {
    if (!lg.default_server) lg.default_server = lg.servers.front();
    // nginx keeps the first server for a name and warns about the others.
    for (size_t a = 0; a < lg.servers.size(); ++a) {
      for (const auto& name : lg.servers[a]->names) {
        if (name.kind == ServerName::Kind::regex || name.name.empty()) continue;
        for (size_t b = 0; b < a; ++b) {
          for (const auto& other : lg.servers[b]->names) {
            if (other.kind == name.kind && other.name == name.name) {
              warnings_.push_back(lg.servers[a]->file + ":" + std::to_string(lg.servers[a]->line) +
                                  ": conflicting server name " + q(name.name) + " on " + lg.listen.text +
                                  ", ignored");
            }
          }
        }
      }
    }
  }
  return Ok{};
}

}  // namespace torii::config
