// The uwsgi module's directives (uwsgi_pass, uwsgi_param, uwsgi_modifier1,
// ...), with nginx's names, contexts and defaults; setters shared with
// FastCGI in directives_cgi.cc.
#include "config/directives_cgi.h"
#include "config/upstream_tls_config.h"

namespace torii::config {

namespace {

using U = cgi::For<&LocationSettings::uwsgi>;
constexpr cgi::Member kMember = &LocationSettings::uwsgi;
constexpr uint16_t kHSL = kHttp | kServer | kLocation;
// uwsgi's array bits sit above FastCGI's in Scope::cgi_here.
constexpr uint32_t kShift = 8;

// "uwsgi_pass [uwsgi://|suwsgi://]address": suwsgi is uwsgi over TLS,
// through the upstream TLS layer with the uwsgi_ssl_* settings
// (directives_proxy_ssl.cc).
Status set_pass(Compiler& c, Scope& s, const Node& n) {
  const bool ssl = n.args[0].rfind("suwsgi://", 0) == 0;
  if (ssl && n.args[0].find('$') != std::string::npos)
    return node_error(n, "variables in \"uwsgi_pass\" over TLS are not supported");
  Status st = cgi::set_pass(c, s, n, kMember, ssl ? "suwsgi://" : "uwsgi://");
  if (!st) return st;
  auto& cfg = cgi::editable(s, kMember).upstream;
  cfg.ssl = ssl;
  if (ssl && !cfg.tls) cfg.tls = std::make_shared<UpstreamTlsConfig>();
  if (ssl) {  // the name checked and sent as SNI: the address's host, as nginx's $proxy_host
    std::string_view host = std::string_view(n.args[0]).substr(9);
    cfg.proxy_host = std::string(host);
  }
  return Ok{};
}

template <uint8_t CgiConfig::*F>
Status set_modifier(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > 255)
    return node_error(n, "invalid value \"" + n.args[0] + "\" in \"" + n.name + "\" directive");
  cgi::editable(s, kMember).*F = static_cast<uint8_t>(v);
  return Ok{};
}

Status set_string(Compiler&, Scope& s, const Node& n) {
  cgi::editable(s, kMember).uwsgi_string = n.args[0];
  return Ok{};
}

const DirectiveSpec kUwsgiDirectives[] = {
    {"uwsgi_pass", kLocation | kLocationIf, kArgs1, true, false, kMain, &set_pass},
    {"uwsgi_param", kHSL, kArgs2 | kArgs3, false, false, kMain, &U::param<cgi::kParamsHere << kShift>},
    {"uwsgi_modifier1", kHSL, kArgs1, true, false, kMain, &set_modifier<&CgiConfig::modifier1>},
    {"uwsgi_modifier2", kHSL, kArgs1, true, false, kMain, &set_modifier<&CgiConfig::modifier2>},
    {"uwsgi_hide_header", kHSL, kArgs1, false, false, kMain,
     &U::names<&ProxyConfig::hide_headers, cgi::kHideHere << kShift>},
    {"uwsgi_pass_header", kHSL, kArgs1, false, false, kMain,
     &U::names<&ProxyConfig::pass_headers, cgi::kPassHere << kShift>},
    {"uwsgi_connect_timeout", kHSL, kArgs1, true, false, kMain, &U::timeout<&ProxyConfig::connect_timeout>},
    {"uwsgi_send_timeout", kHSL, kArgs1, true, false, kMain, &U::timeout<&ProxyConfig::send_timeout>},
    {"uwsgi_read_timeout", kHSL, kArgs1, true, false, kMain, &U::timeout<&ProxyConfig::read_timeout>},
    {"uwsgi_buffering", kHSL, kFlag, true, false, kMain, &U::flag<&ProxyConfig::buffering>},
    {"uwsgi_request_buffering", kHSL, kFlag, true, false, kMain, &U::flag<&ProxyConfig::request_buffering>},
    {"uwsgi_intercept_errors", kHSL, kFlag, true, false, kMain, &U::flag<&ProxyConfig::intercept_errors>},
    {"uwsgi_pass_request_headers", kHSL, kFlag, true, false, kMain, &U::flag<&ProxyConfig::pass_request_headers>},
    {"uwsgi_pass_request_body", kHSL, kFlag, true, false, kMain, &U::flag<&ProxyConfig::pass_request_body>},
    {"uwsgi_ignore_client_abort", kHSL, kFlag, true, false, kMain, &U::flag<&ProxyConfig::ignore_client_abort>},
    {"uwsgi_socket_keepalive", kHSL, kFlag, true, false, kMain, &U::flag<&ProxyConfig::socket_keepalive>},
    {"uwsgi_limit_rate", kHSL, kArgs1, true, false, kMain, &U::limit_rate},
    {"uwsgi_bind", kHSL, kArgs1 | kArgs2, true, false, kMain, &U::bind},
    {"uwsgi_buffer_size", kHSL, kArgs1, true, false, kMain, &U::size<&ProxyConfig::buffer_size>},
    {"uwsgi_buffers", kHSL, kArgs2, true, false, kMain, &U::buffers},
    {"uwsgi_busy_buffers_size", kHSL, kArgs1, true, false, kMain, &U::size<&ProxyConfig::busy_buffers_size>},
    {"uwsgi_next_upstream", kHSL, kArgs1More, true, false, kMain, &U::next_upstream},
    {"uwsgi_next_upstream_tries", kHSL, kArgs1, true, false, kMain, &U::next_tries},
    {"uwsgi_next_upstream_timeout", kHSL, kArgs1, true, false, kMain,
     &U::timeout<&ProxyConfig::next_upstream_timeout>},
    {"uwsgi_string", kHSL, kArgs1, true, false, kMain, &set_string},
    {"uwsgi_max_temp_file_size", kHSL, kArgs1, true, false, kMain, &U::accepted_size},
    {"uwsgi_temp_file_write_size", kHSL, kArgs1, true, false, kMain, &U::accepted_size},
};

}  // namespace

std::span<const DirectiveSpec> uwsgi_directives() { return kUwsgiDirectives; }

}  // namespace torii::config
