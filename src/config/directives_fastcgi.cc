// The FastCGI module's directives (fastcgi_pass, fastcgi_param, ...), with
// nginx's names, contexts and defaults. The upstream settings they share
// with the proxy live in CgiConfig::upstream; setters in directives_cgi.cc.
#include "config/directives_cgi.h"
#include "config/regex.h"

namespace torii::config {

namespace {

using F = cgi::For<&LocationSettings::fastcgi>;
constexpr cgi::Member kMember = &LocationSettings::fastcgi;
constexpr uint16_t kHSL = kHttp | kServer | kLocation;

Status set_pass(Compiler& c, Scope& s, const Node& n) { return cgi::set_pass(c, s, n, kMember, ""); }

Status set_index(Compiler&, Scope& s, const Node& n) {
  cgi::editable(s, kMember).index = n.args[0];
  return Ok{};
}

Status set_split_path_info(Compiler&, Scope& s, const Node& n) {
  auto re = Regex::compile(n.args[0], false);
  if (!re) return node_error(n, re.error());
  if ((*re)->capture_count() != 2)
    return node_error(n, "pattern \"" + n.args[0] + "\" must have 2 captures");
  cgi::editable(s, kMember).split_path_info = std::move(*re);
  return Ok{};
}

Status set_keep_conn(Compiler&, Scope& s, const Node& n) {
  cgi::editable(s, kMember).keep_conn = n.args[0] == "on";
  return Ok{};
}

Status set_catch_stderr(Compiler&, Scope& s, const Node& n) {
  const bool first = cgi::first_here(s, cgi::kCatchHere);
  auto& cfg = cgi::editable(s, kMember);
  if (first) cfg.catch_stderr.clear();
  cfg.catch_stderr.push_back(n.args[0]);
  return Ok{};
}

const DirectiveSpec kFastcgiDirectives[] = {
    {"fastcgi_pass", kLocation | kLocationIf, kArgs1, true, false, kMain, &set_pass},
    {"fastcgi_param", kHSL, kArgs2 | kArgs3, false, false, kMain, &F::param<cgi::kParamsHere>},
    {"fastcgi_index", kHSL, kArgs1, true, false, kMain, &set_index},
    {"fastcgi_split_path_info", kLocation, kArgs1, true, false, kMain, &set_split_path_info},
    {"fastcgi_keep_conn", kHSL, kFlag, true, false, kMain, &set_keep_conn},
    {"fastcgi_catch_stderr", kHSL, kArgs1, false, false, kMain, &set_catch_stderr},
    {"fastcgi_hide_header", kHSL, kArgs1, false, false, kMain,
     &F::names<&ProxyConfig::hide_headers, cgi::kHideHere>},
    {"fastcgi_pass_header", kHSL, kArgs1, false, false, kMain,
     &F::names<&ProxyConfig::pass_headers, cgi::kPassHere>},
    {"fastcgi_connect_timeout", kHSL, kArgs1, true, false, kMain, &F::timeout<&ProxyConfig::connect_timeout>},
    {"fastcgi_send_timeout", kHSL, kArgs1, true, false, kMain, &F::timeout<&ProxyConfig::send_timeout>},
    {"fastcgi_read_timeout", kHSL, kArgs1, true, false, kMain, &F::timeout<&ProxyConfig::read_timeout>},
    {"fastcgi_buffering", kHSL, kFlag, true, false, kMain, &F::flag<&ProxyConfig::buffering>},
    {"fastcgi_request_buffering", kHSL, kFlag, true, false, kMain, &F::flag<&ProxyConfig::request_buffering>},
    {"fastcgi_intercept_errors", kHSL, kFlag, true, false, kMain, &F::flag<&ProxyConfig::intercept_errors>},
    {"fastcgi_pass_request_headers", kHSL, kFlag, true, false, kMain,
     &F::flag<&ProxyConfig::pass_request_headers>},
    {"fastcgi_pass_request_body", kHSL, kFlag, true, false, kMain, &F::flag<&ProxyConfig::pass_request_body>},
    {"fastcgi_ignore_client_abort", kHSL, kFlag, true, false, kMain, &F::flag<&ProxyConfig::ignore_client_abort>},
    {"fastcgi_socket_keepalive", kHSL, kFlag, true, false, kMain, &F::flag<&ProxyConfig::socket_keepalive>},
    {"fastcgi_limit_rate", kHSL, kArgs1, true, false, kMain, &F::limit_rate},
    {"fastcgi_bind", kHSL, kArgs1 | kArgs2, true, false, kMain, &F::bind},
    {"fastcgi_buffer_size", kHSL, kArgs1, true, false, kMain, &F::size<&ProxyConfig::buffer_size>},
    {"fastcgi_buffers", kHSL, kArgs2, true, false, kMain, &F::buffers},
    {"fastcgi_busy_buffers_size", kHSL, kArgs1, true, false, kMain, &F::size<&ProxyConfig::busy_buffers_size>},
    {"fastcgi_next_upstream", kHSL, kArgs1More, true, false, kMain, &F::next_upstream},
    {"fastcgi_next_upstream_tries", kHSL, kArgs1, true, false, kMain, &F::next_tries},
    {"fastcgi_next_upstream_timeout", kHSL, kArgs1, true, false, kMain,
     &F::timeout<&ProxyConfig::next_upstream_timeout>},
    // Temporary files never happen (memory stays within fastcgi_buffers).
    {"fastcgi_max_temp_file_size", kHSL, kArgs1, true, false, kMain, &F::accepted_size},
    {"fastcgi_temp_file_write_size", kHSL, kArgs1, true, false, kMain, &F::accepted_size},
};

}  // namespace

std::span<const DirectiveSpec> fastcgi_directives() { return kFastcgiDirectives; }

}  // namespace torii::config
