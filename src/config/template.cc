#include "config/template.h"

#include <utility>

#include "modules/geoip/fields.h"

namespace torii::config {

namespace {

struct Named {
  std::string_view name;
  VarId id;
};

constexpr Named kPlain[] = {
    {"args", VarId::args},
    {"body_bytes_sent", VarId::body_bytes_sent},
    {"bytes_sent", VarId::bytes_sent},
    {"connection", VarId::connection},
    {"connection_requests", VarId::connection_requests},
    {"content_length", VarId::content_length},
    {"content_type", VarId::content_type},
    {"document_root", VarId::document_root},
    {"document_uri", VarId::document_uri},
    {"fastcgi_path_info", VarId::fastcgi_path_info},
    {"fastcgi_script_name", VarId::fastcgi_script_name},
    {"gzip_ratio", VarId::gzip_ratio},
    {"host", VarId::host},
    {"hostname", VarId::hostname},
    {"http3", VarId::http3},
    {"https", VarId::https},
    {"is_args", VarId::is_args},
    {"limit_conn_status", VarId::limit_conn_status},
    {"limit_rate", VarId::limit_rate},
    {"limit_req_status", VarId::limit_req_status},
    {"msec", VarId::msec},
    {"nginx_version", VarId::nginx_version},
    {"pid", VarId::pid},
    {"proxy_add_x_forwarded_for", VarId::proxy_add_x_forwarded_for},
    {"proxy_host", VarId::proxy_host},
    {"proxy_port", VarId::proxy_port},
    {"query_string", VarId::query_string},
    {"realpath_root", VarId::realpath_root},
    {"remote_addr", VarId::remote_addr},
    {"remote_port", VarId::remote_port},
    {"remote_user", VarId::remote_user},
    {"request", VarId::request},
    {"request_filename", VarId::request_filename},
    {"request_id", VarId::request_id},
    {"request_body", VarId::request_body},
    {"request_body_file", VarId::request_body_file},
    {"request_length", VarId::request_length},
    {"request_method", VarId::request_method},
    {"request_scheme", VarId::request_scheme},
    {"request_time", VarId::request_time},
    {"request_uri", VarId::request_uri},
    {"scheme", VarId::scheme},
    {"server_addr", VarId::server_addr},
    {"server_name", VarId::server_name},
    {"server_port", VarId::server_port},
    {"server_protocol", VarId::server_protocol},
    {"ssl_cipher", VarId::ssl_cipher},
    {"ssl_early_data", VarId::ssl_early_data},
    {"ssl_protocol", VarId::ssl_protocol},
    {"ssl_server_name", VarId::ssl_server_name},
    {"ssl_session_reused", VarId::ssl_session_reused},
    {"ssl_session_id", VarId::ssl_session_id},
    {"ssl_curve", VarId::ssl_curve},
    {"ssl_curves", VarId::ssl_curves},
    {"ssl_ciphers", VarId::ssl_ciphers},
    {"ssl_alpn_protocol", VarId::ssl_alpn_protocol},
    {"connection_time", VarId::connection_time},
    {"pipe", VarId::pipe},
    {"tcpinfo_rtt", VarId::tcpinfo_rtt},
    {"tcpinfo_rttvar", VarId::tcpinfo_rttvar},
    {"tcpinfo_snd_cwnd", VarId::tcpinfo_snd_cwnd},
    {"tcpinfo_rcv_space", VarId::tcpinfo_rcv_space},
    {"date_gmt", VarId::date_gmt},
    {"date_local", VarId::date_local},
    {"status", VarId::status},
    {"time_iso8601", VarId::time_iso8601},
    {"time_local", VarId::time_local},
    {"upstream_addr", VarId::upstream_addr},
    {"upstream_response_time", VarId::upstream_response_time},
    {"upstream_connect_time", VarId::upstream_connect_time},
    {"upstream_header_time", VarId::upstream_header_time},
    {"upstream_status", VarId::upstream_status},
    {"upstream_cache_status", VarId::upstream_cache_status},
    {"slice_range", VarId::slice_range},
    {"invalid_referer", VarId::invalid_referer},
    {"secure_link", VarId::secure_link},
    {"secure_link_expires", VarId::secure_link_expires},
    {"uid_got", VarId::uid_got},
    {"uid_set", VarId::uid_set},
    {"modern_browser", VarId::modern_browser},
    {"ancient_browser", VarId::ancient_browser},
    {"msie", VarId::msie},
    {"upstream_bytes_sent", VarId::upstream_bytes_sent},
    {"upstream_bytes_received", VarId::upstream_bytes_received},
    {"upstream_response_length", VarId::upstream_response_length},
    {"uri", VarId::uri},
    {"binary_remote_addr", VarId::binary_remote_addr},
    {"proxy_protocol_addr", VarId::proxy_protocol_addr},
    {"proxy_protocol_port", VarId::proxy_protocol_port},
    {"proxy_protocol_server_addr", VarId::proxy_protocol_server_addr},
    {"proxy_protocol_server_port", VarId::proxy_protocol_server_port},
    {"realip_remote_addr", VarId::realip_remote_addr},
    {"realip_remote_port", VarId::realip_remote_port},
    {"connections_active", VarId::connections_active},
    {"connections_reading", VarId::connections_reading},
    {"connections_waiting", VarId::connections_waiting},
    {"connections_writing", VarId::connections_writing},
    {"ssl_client_cert", VarId::ssl_client_cert},
    {"ssl_client_escaped_cert", VarId::ssl_client_escaped_cert},
    {"ssl_client_fingerprint", VarId::ssl_client_fingerprint},
    {"ssl_client_i_dn", VarId::ssl_client_i_dn},
    {"ssl_client_s_dn_legacy", VarId::ssl_client_s_dn_legacy},
    {"ssl_client_i_dn_legacy", VarId::ssl_client_i_dn_legacy},
    {"ssl_client_raw_cert", VarId::ssl_client_raw_cert},
    {"ssl_client_s_dn", VarId::ssl_client_s_dn},
    {"ssl_client_serial", VarId::ssl_client_serial},
    {"ssl_client_v_end", VarId::ssl_client_v_end},
    {"ssl_client_v_remain", VarId::ssl_client_v_remain},
    {"ssl_client_v_start", VarId::ssl_client_v_start},
    {"ssl_client_verify", VarId::ssl_client_verify},
};

// Header names in variables use '_' for '-' and any case.
std::string header_arg(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    if (c == '_') c = '-';
    else if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void add_literal(Template& t, std::string_view s) {
  if (s.empty()) return;
  if (!t.parts.empty() && !t.parts.back().is_variable) {
    t.parts.back().literal.append(s);
    return;
  }
  TemplatePart p;
  p.literal = std::string(s);
  t.parts.push_back(std::move(p));
}

// map {} variables of the config compiling on this thread.
struct Defined {
  std::string name;
  size_t index;
  VarId id;  // map_, geo_, split_clients_ or geoip2_
  bool declared_only = false;  // its block has not compiled yet (declare_variable)
};
thread_local std::vector<Defined> t_defined;
// `set` variables and named captures, by slot.
thread_local std::vector<std::string> t_user;
thread_local bool t_upstream_headers = false;
thread_local bool t_upstream_bytes = false;
thread_local bool t_declarations_broken = false;

}  // namespace

void define_variable(const std::string& name, size_t map_index, VarId id) {
  for (auto& d : t_defined) {
    if (d.name == name) {
      // A declared slot must be the one its block takes: templates compiled
      // before the block already point at it.
      if (d.declared_only && (d.index != map_index || d.id != id)) t_declarations_broken = true;
      d.index = map_index;
      d.id = id;
      d.declared_only = false;
      return;
    }
  }
  t_defined.push_back(Defined{name, map_index, id});
}

void declare_variable(const std::string& name, size_t index, VarId id) {
  // A name already known (built in, a family such as $arg_*, `set`, or a
  // second block of that name) is left to the block's own compile, which
  // refuses a duplicate as before.
  // A `set` of the same name is no obstacle: the two share the variable.
  Variable known;
  if (lookup_variable(name, known) && known.id != VarId::user_) return;
  t_defined.push_back(Defined{name, index, id, true});
}

bool variable_taken(std::string_view name) {
  for (const auto& d : t_defined)
    if (d.name == name && d.declared_only) return false;
  Variable existing;
  return lookup_variable(name, existing);
}

bool declarations_kept() {
  for (const auto& d : t_defined)
    if (d.declared_only) return false;
  return !t_declarations_broken;
}

void clear_defined_variables() {
  t_defined.clear();
  t_user.clear();
  t_upstream_headers = false;
  t_upstream_bytes = false;
  t_declarations_broken = false;
}

uint32_t define_user_variable(std::string_view name) {
  for (size_t i = 0; i < t_user.size(); ++i)
    if (t_user[i] == name) return static_cast<uint32_t>(i);
  t_user.emplace_back(name);
  return static_cast<uint32_t>(t_user.size() - 1);
}

const std::vector<std::string>& user_variable_names() { return t_user; }

bool upstream_headers_used() { return t_upstream_headers; }
bool upstream_bytes_used() { return t_upstream_bytes; }

bool is_builtin_variable(std::string_view name) {
  if (geoip::Field f; geoip::find_field(name, f)) return true;
  for (const auto& n : kPlain)
    if (n.name == name) return true;
  return false;
}

bool settable_slot(const Variable& v, uint32_t& slot) {
  if (v.id == VarId::user_) {
    slot = v.index;
    return true;
  }
  slot = v.set_slot;
  return slot != kNoSlot;
}

bool lookup_variable(std::string_view name, Variable& out) {
  out.set_slot = kNoSlot;
  // A `set` of a name in a prefix family ($http_x, $arg_x, $cookie_x...)
  // writes a slot that stands for the family's value only in a request
  // where it ran, as nginx (whose `set` gives those names no reader of
  // their own); other `set` names are variables of their own. $args stays
  // built in.
  uint32_t user = kNoSlot;
  for (size_t i = 0; i < t_user.size(); ++i) {
    if (t_user[i] == name && name != "args") {
      user = static_cast<uint32_t>(i);
      break;
    }
  }
  // A block's variable that a `set` also writes (Nginx Proxy Manager's
  // `map $host $forward_scheme` and `set $forward_scheme https`) reads the
  // block's value until the `set` runs.
  for (const auto& d : t_defined) {
    if (d.name == name) {
      out.id = d.id;
      out.arg = std::to_string(d.index);
      out.set_slot = user;
      return true;
    }
  }
  struct Family {
    std::string_view prefix;
    VarId id;
    bool header;
  };
  static constexpr Family kFamilies[] = {
      {"upstream_http_", VarId::upstream_http_, true},
      {"upstream_cookie_", VarId::upstream_cookie_, false},
      {"http_", VarId::http_, true},
      {"sent_http_", VarId::sent_http_, true},
      {"arg_", VarId::arg_, false},
      {"cookie_", VarId::cookie_, false},
  };
  // The name after the prefix may be empty ($arg_ is an argument without a
  // name, found in none), as nginx's prefix match.
  const Family* family = nullptr;
  for (const auto& f : kFamilies)
    if (name.substr(0, f.prefix.size()) == f.prefix) family = family ? family : &f;
  if (user != kNoSlot && !family) {
    out.id = VarId::user_;
    out.arg.clear();
    out.index = user;
    return true;
  }
  for (const auto& n : kPlain) {
    if (n.name == name) {
      out.id = n.id;
      out.arg.clear();
      if (n.id == VarId::upstream_bytes_sent || n.id == VarId::upstream_bytes_received) t_upstream_bytes = true;
      return true;
    }
  }
  if (geoip::Field f; geoip::find_field(name, f)) {
    out.id = VarId::geoip_;
    out.arg.clear();
    out.index = static_cast<uint32_t>(f);
    return true;
  }
  if (name.size() == 1 && name[0] >= '1' && name[0] <= '9') {
    out.id = VarId::capture;
    out.arg = std::string(name);
    return true;
  }
  if (family) {
    const std::string_view rest = name.substr(family->prefix.size());
    out.id = family->id;
    out.arg = family->header ? header_arg(rest) : std::string(rest);
    out.set_slot = user;
    if (family->id == VarId::upstream_http_ || family->id == VarId::upstream_cookie_) t_upstream_headers = true;
    return true;
  }
  return false;
}

Template literal_template(std::string_view text) {
  Template t;
  t.source = std::string(text);
  TemplatePart p;
  p.literal = t.source;
  t.parts.push_back(std::move(p));
  return t;
}

Result<Template> compile_template(std::string_view text) {
  Template t;
  t.source = std::string(text);
  size_t i = 0;
  size_t lit_start = 0;
  while (i < text.size()) {
    if (text[i] != '$') {
      ++i;
      continue;
    }
    add_literal(t, text.substr(lit_start, i - lit_start));
    ++i;  // past '$'
    if (i >= text.size()) return make_error("invalid variable name");
    std::string_view name;
    if (text[i] == '{') {
      size_t close = text.find('}', i + 1);
      if (close == std::string_view::npos) return make_error("the closing bracket in \"" +
                                                             std::string(text.substr(i + 1)) +
                                                             "\" variable is missing");
      name = text.substr(i + 1, close - i - 1);
      for (char c : name)
        if (!is_name_char(c)) return make_error("invalid variable name");
      i = close + 1;
    } else if (text[i] >= '1' && text[i] <= '9') {
      // $1..$9: one digit only, so "$1abc" is capture 1 then "abc".
      name = text.substr(i, 1);
      ++i;
    } else {
      size_t start = i;
      while (i < text.size() && is_name_char(text[i])) ++i;
      name = text.substr(start, i - start);
    }
    if (name.empty()) return make_error("invalid variable name");
    TemplatePart p;
    p.is_variable = true;
    if (!lookup_variable(name, p.variable))
      return make_error("unknown \"" + std::string(name) + "\" variable");
    t.parts.push_back(std::move(p));
    lit_start = i;
  }
  add_literal(t, text.substr(lit_start));
  return t;
}

}  // namespace torii::config
