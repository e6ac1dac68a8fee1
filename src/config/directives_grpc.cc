// The grpc module's directives (grpc_pass, grpc_set_header, grpc_*
// timeouts, hidden and passed fields, next_upstream; grpc_ssl_* live with
// proxy_ssl_* in directives_proxy_ssl.cc). The settings are a CgiConfig
// like FastCGI's and uwsgi's (the shared upstream part; no params), set
// through the same helpers.
#include "config/directives_cgi.h"
#include "core/quote.h"
#include "config/upstream_tls_config.h"

namespace torii::config {

namespace {

using G = cgi::For<&LocationSettings::grpc>;
constexpr cgi::Member kMember = &LocationSettings::grpc;
constexpr uint16_t kHSL = kHttp | kServer | kLocation;
// gRPC's array bits sit above uwsgi's in Scope::cgi_here; grpc_set_header
// uses the bit FastCGI's catch_stderr has.
constexpr uint32_t kShift = 16;

// "grpc_pass [grpc://|grpcs://]address|group".
Status set_pass(Compiler& c, Scope& s, const Node& n) {
  std::string_view url = n.args[0];
  if (url.find('$') != std::string_view::npos) return node_error(n, "variables in \"grpc_pass\" are not yet supported");
  const bool ssl = url.rfind("grpcs://", 0) == 0;
  if (ssl) url.remove_prefix(8);
  else if (url.rfind("grpc://", 0) == 0) url.remove_prefix(7);
  const bool unix_socket = url.rfind("unix:", 0) == 0;  // a path: its slashes are its own
  if (!unix_socket && (url.find("://") != std::string_view::npos || url.find('/') != std::string_view::npos))
    return node_error(n, "invalid value " + q(n.args[0]) + " in \"grpc_pass\" directive");
  if (url.empty()) return node_error(n, "no host in " + q(n.args[0]));
  auto group = upstream_for_address(c, url, n, ssl ? 443 : 80);
  if (!group) return Error{group.error()};
  auto& cfg = cgi::editable(s, kMember).upstream;
  cfg.upstream = std::move(*group);
  cfg.ssl = ssl;
  if (ssl && !cfg.tls) cfg.tls = std::make_shared<UpstreamTlsConfig>();
  std::string host(unix_socket ? std::string_view("localhost") : url);  // nginx's host for a socket file
  const std::string_view default_port = ssl ? ":443" : ":80";
  if (host.size() > default_port.size() && host.ends_with(default_port)) host.resize(host.size() - default_port.size());
  cfg.proxy_host = std::move(host);  // :authority, unless grpc_set_header Host says otherwise
  cfg.has_uri = false;
  cfg.uri_from_regex = true;  // the request's URI goes as it came
  cfg.http_version = 11;
  cfg.request_buffering = false;  // messages stream both ways
  return Ok{};
}

Status set_header(Compiler&, Scope& s, const Node& n) {
  auto t = compile_template(n.args[1]);
  if (!t) return node_error(n, t.error());
  const bool first = cgi::first_here(s, cgi::kCatchHere << kShift);
  auto& cfg = cgi::editable(s, kMember).upstream;
  if (first) cfg.set_headers.clear();
  cfg.set_headers.push_back({n.args[0], std::move(*t)});  // each line a field, as proxy_set_header
  return Ok{};
}

const DirectiveSpec kGrpcDirectives[] = {
    {"grpc_pass", kLocation | kLocationIf, kArgs1, true, false, kMain, &set_pass},
    {"grpc_set_header", kHSL, kArgs2, false, false, kMain, &set_header},
    {"grpc_hide_header", kHSL, kArgs1, false, false, kMain,
     &G::names<&ProxyConfig::hide_headers, cgi::kHideHere << kShift>},
    {"grpc_pass_header", kHSL, kArgs1, false, false, kMain,
     &G::names<&ProxyConfig::pass_headers, cgi::kPassHere << kShift>},
    {"grpc_ignore_headers", kHSL, kArgs1More, true, false, kMain, &G::ignore_headers},
    {"grpc_connect_timeout", kHSL, kArgs1, true, false, kMain, &G::timeout<&ProxyConfig::connect_timeout>},
    {"grpc_send_timeout", kHSL, kArgs1, true, false, kMain, &G::timeout<&ProxyConfig::send_timeout>},
    {"grpc_read_timeout", kHSL, kArgs1, true, false, kMain, &G::timeout<&ProxyConfig::read_timeout>},
    {"grpc_intercept_errors", kHSL, kFlag, true, false, kMain, &G::flag<&ProxyConfig::intercept_errors>},
    {"grpc_socket_keepalive", kHSL, kFlag, true, false, kMain, &G::flag<&ProxyConfig::socket_keepalive>},
    {"grpc_bind", kHSL, kArgs1 | kArgs2, true, false, kMain, &G::bind},
    {"grpc_buffer_size", kHSL, kArgs1, true, false, kMain, &G::size<&ProxyConfig::buffer_size>},
    {"grpc_next_upstream", kHSL, kArgs1More, true, false, kMain, &G::next_upstream},
    {"grpc_next_upstream_tries", kHSL, kArgs1, true, false, kMain, &G::next_tries},
    {"grpc_next_upstream_timeout", kHSL, kArgs1, true, false, kMain,
     &G::timeout<&ProxyConfig::next_upstream_timeout>},
};

}  // namespace

std::span<const DirectiveSpec> grpc_directives() { return kGrpcDirectives; }

}  // namespace torii::config
