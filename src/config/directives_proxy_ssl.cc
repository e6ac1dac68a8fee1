// proxy_ssl_*: TLS to https:// upstreams. The directives only record
// settings (copy on write, like the rest of the proxy's); the client
// context is built once the whole config is read.
#include <memory>

#include "config/directives.h"
#include "core/quote.h"
#include "config/directives_cgi.h"
#include "config/proxy_config.h"
#include "config/ssl_directive_args.h"
#include "config/upstream_tls_config.h"
#include "modules/rewrite/program.h"
#include "net/upstream_tls_context.h"

namespace torii::config {

namespace {

// The module's settings and their TLS part are both shared with the
// parent block until a directive changes them: proxy_ssl_* write the
// proxy's, grpc_ssl_* the grpc module's, uwsgi_ssl_* the uwsgi module's.
template <typename F>
Status edit_tls(Scope& s, const Node& n, F&& f) {
  const bool grpc = n.name.rfind("grpc_", 0) == 0;
  const bool uwsgi = n.name.rfind("uwsgi_", 0) == 0;
  auto t = std::make_shared<UpstreamTlsConfig>();
  ProxyConfig* target = nullptr;
  std::shared_ptr<ProxyConfig> proxy;
  if (grpc) {
    target = &cgi::editable(s, &LocationSettings::grpc).upstream;
  } else if (uwsgi) {
    target = &cgi::editable(s, &LocationSettings::uwsgi).upstream;
  } else {
    proxy = s.settings->proxy ? std::make_shared<ProxyConfig>(*s.settings->proxy) : std::make_shared<ProxyConfig>();
    target = proxy.get();
  }
  if (target->tls) *t = *target->tls;
  t->ctx.reset();
  t->directive = grpc ? "grpc_ssl" : uwsgi ? "uwsgi_ssl" : "proxy_ssl";
  Status st = f(*t);
  if (!st) return st;
  target->tls = std::move(t);
  if (proxy) s.settings->proxy = std::move(proxy);
  return Ok{};
}

template <SslFile UpstreamTlsConfig::*F>
Status set_file(Compiler& c, Scope& s, const Node& n) {
  auto f = tls_file_arg(c, n);
  if (!f) return Error{f.error()};
  return edit_tls(s, n, [&](UpstreamTlsConfig& t) -> Status {
    t.*F = std::move(*f);
    return Ok{};
  });
}

Status set_password_file(Compiler& c, Scope& s, const Node& n) {
  auto passwords = read_password_file(c, n);
  if (!passwords) return Error{passwords.error()};
  return edit_tls(s, n, [&](UpstreamTlsConfig& t) -> Status {
    t.passwords = std::move(*passwords);
    return Ok{};
  });
}

Status set_conf_command(Compiler&, Scope& s, const Node& n) {
  return edit_tls(s, n, [&](UpstreamTlsConfig& t) -> Status {
    if (t.conf_commands_owner != s.settings) {  // the first here replaces the inherited list
      t.conf_commands.clear();
      t.conf_commands_owner = s.settings;
      t.conf_commands_where = n.where();
    }
    t.conf_commands.emplace_back(n.args[0], n.args[1]);
    return Ok{};
  });
}

template <bool UpstreamTlsConfig::*F>
Status set_flag(Compiler&, Scope& s, const Node& n) {
  const bool on = n.args[0] == "on";
  return edit_tls(s, n, [&](UpstreamTlsConfig& t) -> Status {
    t.*F = on;
    return Ok{};
  });
}

Status set_protocols(Compiler& c, Scope& s, const Node& n) {
  auto bits = tls_protocols_arg(c, n);
  if (!bits) return Error{bits.error()};
  return edit_tls(s, n, [&](UpstreamTlsConfig& t) -> Status {
    t.protocols = *bits;
    return Ok{};
  });
}

Status set_ciphers(Compiler&, Scope& s, const Node& n) {
  return edit_tls(s, n, [&](UpstreamTlsConfig& t) -> Status {
    t.ciphers = n.args[0];
    return Ok{};
  });
}

Status set_name(Compiler&, Scope& s, const Node& n) {
  auto name = compile_template(n.args[0]);
  if (!name) return node_error(n, name.error());
  return edit_tls(s, n, [&](UpstreamTlsConfig& t) -> Status {
    t.name = std::move(*name);
    return Ok{};
  });
}

Status set_verify_depth(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > 100) return invalid_value(n, n.args[0]);
  return edit_tls(s, n, [&](UpstreamTlsConfig& t) -> Status {
    t.verify_depth = int(v);
    return Ok{};
  });
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

const DirectiveSpec kProxySslDirectives[] = {
    {"proxy_ssl_protocols", kHSL, kArgs1More, true, false, kMain, &set_protocols},
    {"proxy_ssl_ciphers", kHSL, kArgs1, true, false, kMain, &set_ciphers},
    {"proxy_ssl_server_name", kHSL, kFlag, true, false, kMain, &set_flag<&UpstreamTlsConfig::server_name>},
    {"proxy_ssl_name", kHSL, kArgs1, true, false, kMain, &set_name},
    {"proxy_ssl_verify", kHSL, kFlag, true, false, kMain, &set_flag<&UpstreamTlsConfig::verify>},
    {"proxy_ssl_verify_depth", kHSL, kArgs1, true, false, kMain, &set_verify_depth},
    {"proxy_ssl_trusted_certificate", kHSL, kArgs1, true, false, kMain,
     &set_file<&UpstreamTlsConfig::trusted_certificate>},
    {"proxy_ssl_certificate", kHSL, kArgs1, true, false, kMain, &set_file<&UpstreamTlsConfig::certificate>},
    {"proxy_ssl_certificate_key", kHSL, kArgs1, true, false, kMain, &set_file<&UpstreamTlsConfig::certificate_key>},
    {"proxy_ssl_password_file", kHSL, kArgs1, true, false, kMain, &set_password_file},
    {"proxy_ssl_conf_command", kHSL, kArgs2, false, false, kMain, &set_conf_command},
    {"proxy_ssl_crl", kHSL, kArgs1, true, false, kMain, &set_file<&UpstreamTlsConfig::crl>},
    {"proxy_ssl_session_reuse", kHSL, kFlag, true, false, kMain, &set_flag<&UpstreamTlsConfig::session_reuse>},
    {"grpc_ssl_protocols", kHSL, kArgs1More, true, false, kMain, &set_protocols},
    {"grpc_ssl_ciphers", kHSL, kArgs1, true, false, kMain, &set_ciphers},
    {"grpc_ssl_server_name", kHSL, kFlag, true, false, kMain, &set_flag<&UpstreamTlsConfig::server_name>},
    {"grpc_ssl_name", kHSL, kArgs1, true, false, kMain, &set_name},
    {"grpc_ssl_verify", kHSL, kFlag, true, false, kMain, &set_flag<&UpstreamTlsConfig::verify>},
    {"grpc_ssl_verify_depth", kHSL, kArgs1, true, false, kMain, &set_verify_depth},
    {"grpc_ssl_trusted_certificate", kHSL, kArgs1, true, false, kMain,
     &set_file<&UpstreamTlsConfig::trusted_certificate>},
    {"grpc_ssl_certificate", kHSL, kArgs1, true, false, kMain, &set_file<&UpstreamTlsConfig::certificate>},
    {"grpc_ssl_certificate_key", kHSL, kArgs1, true, false, kMain, &set_file<&UpstreamTlsConfig::certificate_key>},
    {"grpc_ssl_password_file", kHSL, kArgs1, true, false, kMain, &set_password_file},
    {"grpc_ssl_conf_command", kHSL, kArgs2, false, false, kMain, &set_conf_command},
    {"grpc_ssl_crl", kHSL, kArgs1, true, false, kMain, &set_file<&UpstreamTlsConfig::crl>},
    {"grpc_ssl_session_reuse", kHSL, kFlag, true, false, kMain, &set_flag<&UpstreamTlsConfig::session_reuse>},
    {"uwsgi_ssl_protocols", kHSL, kArgs1More, true, false, kMain, &set_protocols},
    {"uwsgi_ssl_ciphers", kHSL, kArgs1, true, false, kMain, &set_ciphers},
    {"uwsgi_ssl_server_name", kHSL, kFlag, true, false, kMain, &set_flag<&UpstreamTlsConfig::server_name>},
    {"uwsgi_ssl_name", kHSL, kArgs1, true, false, kMain, &set_name},
    {"uwsgi_ssl_verify", kHSL, kFlag, true, false, kMain, &set_flag<&UpstreamTlsConfig::verify>},
    {"uwsgi_ssl_verify_depth", kHSL, kArgs1, true, false, kMain, &set_verify_depth},
    {"uwsgi_ssl_trusted_certificate", kHSL, kArgs1, true, false, kMain,
     &set_file<&UpstreamTlsConfig::trusted_certificate>},
    {"uwsgi_ssl_certificate", kHSL, kArgs1, true, false, kMain, &set_file<&UpstreamTlsConfig::certificate>},
    {"uwsgi_ssl_certificate_key", kHSL, kArgs1, true, false, kMain, &set_file<&UpstreamTlsConfig::certificate_key>},
    {"uwsgi_ssl_password_file", kHSL, kArgs1, true, false, kMain, &set_password_file},
    {"uwsgi_ssl_conf_command", kHSL, kArgs2, false, false, kMain, &set_conf_command},
    {"uwsgi_ssl_crl", kHSL, kArgs1, true, false, kMain, &set_file<&UpstreamTlsConfig::crl>},
    {"uwsgi_ssl_session_reuse", kHSL, kFlag, true, false, kMain, &set_flag<&UpstreamTlsConfig::session_reuse>},
};

// A block speaks TLS upstream when its proxy_pass is https:// or its
// proxy_pass with variables may render one.
bool needs_context(const ProxyConfig& p) { return p.ssl || !p.url_template.empty(); }

Status build_one(const ProxyConfig& p) {
  if (!needs_context(p)) return Ok{};
  if (!p.tls) return make_error("internal: a TLS upstream without TLS settings");
  const UpstreamTlsConfig& t = *p.tls;
  if (t.ctx) return Ok{};  // shared with a block built already
  auto ctx = net::build_upstream_tls_context(t);
  if (!ctx) return Error{ctx.error()};
  t.ctx = std::move(*ctx);
  return Ok{};
}

Status build_for(const LocationSettings& s) {
  Status st = s.proxy ? build_one(*s.proxy) : Status(Ok{});
  if (st && s.grpc) st = build_one(s.grpc->upstream);
  if (st && s.uwsgi) st = build_one(s.uwsgi->upstream);
  return st;
}

Status build_tree(const Location& loc);

// The settings of the `if` blocks inside a location's rewrite program.
Status build_ifs(const LocationSettings& s) {
  if (!s.rewrite) return Ok{};
  for (const auto& step : s.rewrite->steps) {
    const auto* when = std::get_if<rewrite::IfStep>(&step);
    if (!when || !when->settings) continue;
    Status st = build_tree(*when->settings);
    if (!st) return st;
  }
  return Ok{};
}

Status build_tree(const Location& loc) {
  Status st = build_for(loc.settings);
  if (st) st = build_ifs(loc.settings);
  if (!st) return st;
  for (const auto& child : loc.children) {
    st = build_tree(*child);
    if (!st) return st;
  }
  return Ok{};
}

}  // namespace

std::span<const DirectiveSpec> proxy_ssl_directives() { return kProxySslDirectives; }

Status build_upstream_tls_contexts(const std::vector<std::shared_ptr<Server>>& servers) {
  for (const auto& srv : servers) {
    Status st = build_for(srv->settings);
    if (!st) return st;
    for (const auto& loc : srv->locations) {
      st = build_tree(*loc);
      if (!st) return st;
    }
  }
  return Ok{};
}

}  // namespace torii::config
