// Setters shared by the fastcgi_* and uwsgi_* directive tables: each
// module keeps its own CgiConfig in LocationSettings (`M`), copy on write
// like the proxy's, and its array directives (params, hidden and passed
// fields, catch_stderr) replace the inherited list at their first use in a
// block, as nginx's merge does.
#pragma once

#include <memory>
#include <string_view>

#include "config/cgi_config.h"
#include "config/directives.h"

namespace torii::config::cgi {

using Member = std::shared_ptr<const CgiConfig> LocationSettings::*;

// Scope::cgi_here bits, one set per module (shift by the module's offset).
enum : uint32_t { kParamsHere = 1, kHideHere = 2, kPassHere = 4, kCatchHere = 8 };

CgiConfig& editable(Scope& s, Member m);
// `bit` is the array's kind shifted for the module: true the first time here.
bool first_here(Scope& s, uint32_t bit);

Status set_pass(Compiler& c, Scope& s, const Node& n, Member m, std::string_view strip_scheme);
Status set_param(Scope& s, const Node& n, Member m, uint32_t bit);
Status set_name_list(Scope& s, const Node& n, Member m, std::vector<std::string> ProxyConfig::*list, uint32_t bit);
Status set_timeout(Scope& s, const Node& n, Member m, Ms ProxyConfig::*f);
Status set_flag(Scope& s, const Node& n, Member m, bool ProxyConfig::*f);
Status set_size(Scope& s, const Node& n, Member m, size_t ProxyConfig::*f);
Status set_buffers(Scope& s, const Node& n, Member m);
Status set_next_upstream(Scope& s, const Node& n, Member m);
Status set_next_tries(Scope& s, const Node& n, Member m);
// proxy_ignore_headers and its kin: the IgnoreHeader bits named.
Status parse_ignore_headers(const Node& n, uint32_t& mask);
Status set_ignore_headers(Scope& s, const Node& n, Member m);
Status accept_size(const Node& n);
Status set_bind(Scope& s, const Node& n, Member m);
Status set_limit_rate(Scope& s, const Node& n, Member m);

// Table rows bind a module's member with these wrappers.
template <Member M>
struct For {
  template <bool ProxyConfig::*F>
  static Status flag(Compiler&, Scope& s, const Node& n) { return set_flag(s, n, M, F); }
  template <Ms ProxyConfig::*F>
  static Status timeout(Compiler&, Scope& s, const Node& n) { return set_timeout(s, n, M, F); }
  template <size_t ProxyConfig::*F>
  static Status size(Compiler&, Scope& s, const Node& n) { return set_size(s, n, M, F); }
  template <std::vector<std::string> ProxyConfig::*F, uint32_t Bit>
  static Status names(Compiler&, Scope& s, const Node& n) { return set_name_list(s, n, M, F, Bit); }
  template <uint32_t Bit>
  static Status param(Compiler&, Scope& s, const Node& n) { return set_param(s, n, M, Bit); }
  static Status buffers(Compiler&, Scope& s, const Node& n) { return set_buffers(s, n, M); }
  static Status next_upstream(Compiler&, Scope& s, const Node& n) { return set_next_upstream(s, n, M); }
  static Status next_tries(Compiler&, Scope& s, const Node& n) { return set_next_tries(s, n, M); }
  static Status ignore_headers(Compiler&, Scope& s, const Node& n) { return set_ignore_headers(s, n, M); }
  static Status limit_rate(Compiler&, Scope& s, const Node& n) { return set_limit_rate(s, n, M); }
  static Status bind(Compiler&, Scope& s, const Node& n) { return set_bind(s, n, M); }
  static Status accepted_size(Compiler&, Scope&, const Node& n) { return accept_size(n); }
  static Status accepted(Compiler&, Scope&, const Node&) { return Ok{}; }
};

}  // namespace torii::config::cgi
