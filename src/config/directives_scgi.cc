// The SCGI module's directives (scgi_pass, scgi_param, ...), with nginx's
// names, contexts and defaults; setters shared with FastCGI and uwsgi in
// directives_cgi.cc. SCGI has no keep-alive of its own (no scgi_keep_conn):
// the application closes after each response. scgi_ignore_headers and
// scgi_cache* are in directives_cache.cc, with the other modules'.
#include "config/directives_cgi.h"

namespace torii::config {

namespace {

using S = cgi::For<&LocationSettings::scgi>;
constexpr cgi::Member kMember = &LocationSettings::scgi;
constexpr uint16_t kHSL = kHttp | kServer | kLocation;
// SCGI's array bits sit between FastCGI's and uwsgi's in Scope::cgi_here.
constexpr uint32_t kShift = 4;

// "scgi_pass address" (nginx takes no scheme here).
Status set_pass(Compiler& c, Scope& s, const Node& n) { return cgi::set_pass(c, s, n, kMember, ""); }

const DirectiveSpec kScgiDirectives[] = {
    {"scgi_pass", kLocation | kLocationIf, kArgs1, true, false, kMain, &set_pass},
    {"scgi_param", kHSL, kArgs2 | kArgs3, false, false, kMain, &S::param<cgi::kParamsHere << kShift>},
    {"scgi_hide_header", kHSL, kArgs1, false, false, kMain,
     &S::names<&ProxyConfig::hide_headers, cgi::kHideHere << kShift>},
    {"scgi_pass_header", kHSL, kArgs1, false, false, kMain,
     &S::names<&ProxyConfig::pass_headers, cgi::kPassHere << kShift>},
    {"scgi_connect_timeout", kHSL, kArgs1, true, false, kMain, &S::timeout<&ProxyConfig::connect_timeout>},
    {"scgi_send_timeout", kHSL, kArgs1, true, false, kMain, &S::timeout<&ProxyConfig::send_timeout>},
    {"scgi_read_timeout", kHSL, kArgs1, true, false, kMain, &S::timeout<&ProxyConfig::read_timeout>},
    {"scgi_buffering", kHSL, kFlag, true, false, kMain, &S::flag<&ProxyConfig::buffering>},
    {"scgi_request_buffering", kHSL, kFlag, true, false, kMain, &S::flag<&ProxyConfig::request_buffering>},
    {"scgi_intercept_errors", kHSL, kFlag, true, false, kMain, &S::flag<&ProxyConfig::intercept_errors>},
    {"scgi_pass_request_headers", kHSL, kFlag, true, false, kMain, &S::flag<&ProxyConfig::pass_request_headers>},
    {"scgi_pass_request_body", kHSL, kFlag, true, false, kMain, &S::flag<&ProxyConfig::pass_request_body>},
    {"scgi_ignore_client_abort", kHSL, kFlag, true, false, kMain, &S::flag<&ProxyConfig::ignore_client_abort>},
    {"scgi_socket_keepalive", kHSL, kFlag, true, false, kMain, &S::flag<&ProxyConfig::socket_keepalive>},
    {"scgi_limit_rate", kHSL, kArgs1, true, false, kMain, &S::limit_rate},
    {"scgi_bind", kHSL, kArgs1 | kArgs2, true, false, kMain, &S::bind},
    {"scgi_buffer_size", kHSL, kArgs1, true, false, kMain, &S::size<&ProxyConfig::buffer_size>},
    {"scgi_buffers", kHSL, kArgs2, true, false, kMain, &S::buffers},
    {"scgi_busy_buffers_size", kHSL, kArgs1, true, false, kMain, &S::size<&ProxyConfig::busy_buffers_size>},
    {"scgi_next_upstream", kHSL, kArgs1More, true, false, kMain, &S::next_upstream},
    {"scgi_next_upstream_tries", kHSL, kArgs1, true, false, kMain, &S::next_tries},
    {"scgi_next_upstream_timeout", kHSL, kArgs1, true, false, kMain,
     &S::timeout<&ProxyConfig::next_upstream_timeout>},
    {"scgi_max_temp_file_size", kHSL, kArgs1, true, false, kMain, &S::accepted_size},
    {"scgi_temp_file_write_size", kHSL, kArgs1, true, false, kMain, &S::accepted_size},
};

}  // namespace

std::span<const DirectiveSpec> scgi_directives() { return kScgiDirectives; }

}  // namespace torii::config
