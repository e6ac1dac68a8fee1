// A string with $variables, compiled once at config load. Rendering needs a
// request, so it lives in http/variables.h; config only parses and checks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace torii::config {

enum class VarId : uint8_t {
  // Prefix families: the part after the prefix is in Variable::arg.
  http_,        // $http_user_agent -> arg "user-agent" (lower-case, '_' -> '-')
  sent_http_,   // response header, same spelling rule
  arg_,         // query argument, arg as written
  cookie_,      // cookie, arg as written
  capture,      // $1..$9 from the last regex match; arg "1".."9"
  map_,         // a map {} variable; arg is its index in Config::maps
  geo_,         // a geo {} variable; arg is its index in Config::geos
  split_clients_,  // a split_clients {} variable; arg is its index in Config::split_clients
  user_,        // a `set` variable or a named regex capture; `index` is its slot
  upstream_http_,    // the upstream response's header, spelled as http_
  upstream_cookie_,  // a cookie the upstream set (Set-Cookie), arg as written
  geoip_,            // $geoip_*: `index` is the geoip::Field (modules/geoip/fields.h)
  geoip2_,           // a geoip2 {} variable; arg is its index in Geoip2Config::variables
  // Plain variables.
  args,
  body_bytes_sent,
  bytes_sent,
  connection,
  connection_requests,
  content_length,
  content_type,
  document_root,
  document_uri,
  fastcgi_path_info,    // fastcgi_split_path_info's second capture
  fastcgi_script_name,  // its first (or the URI), fastcgi_index after a '/'
  gzip_ratio,  // compression module: in/out of the encoded body
  host,
  hostname,
  http3,  // "h3" on an HTTP/3 request, empty otherwise
  https,
  is_args,
  limit_conn_status,  // limit_conn module
  limit_rate,         // limit_rate module; settable with `set`
  limit_req_status,   // limit_req module
  msec,
  nginx_version,  // torii's version: the configs that read it expect a server's
  pid,
  proxy_add_x_forwarded_for,
  proxy_host,
  proxy_port,  // proxy_pass's port, else 80 or 443
  query_string,
  realpath_root,
  remote_addr,
  remote_port,
  remote_user,
  request,
  request_body,       // the body a handler read whole into memory (proxy_pass...), else not found
  request_body_file,  // the name of the file it went to (client_body_in_file_only)
  request_filename,
  request_id,  // 32 hex digits, random, one per request
  request_length,
  request_method,
  request_scheme,
  request_time,
  request_uri,
  scheme,
  server_addr,
  server_name,
  server_port,
  server_protocol,
  ssl_cipher,
  ssl_early_data,
  ssl_protocol,
  ssl_server_name,
  ssl_session_reused,
  ssl_session_id,     // hex; these four are asked of the TLS library when read
  ssl_curve,
  ssl_curves,
  ssl_ciphers,
  ssl_client_s_dn_legacy,
  ssl_client_i_dn_legacy,
  ssl_alpn_protocol,
  connection_time,    // seconds with milliseconds since the connection was accepted
  pipe,               // "p" for a request that came with the previous one's bytes, else "."
  tcpinfo_rtt,        // the client socket's TCP_INFO, as nginx on Linux
  tcpinfo_rttvar,
  tcpinfo_snd_cwnd,
  tcpinfo_rcv_space,
  date_gmt,           // now, in ssi_timefmt's default form (SSI's variables, everywhere)
  date_local,
  status,
  time_iso8601,
  time_local,
  upstream_addr,
  upstream_response_time,
  upstream_connect_time,
  upstream_header_time,
  upstream_response_length,
  upstream_bytes_sent,
  upstream_bytes_received,
  upstream_status,
  upstream_cache_status,
  slice_range,  // slice module: the part this request fetches ("bytes=START-END")
  invalid_referer,      // referer module: "1" when valid_referers refuses the Referer
  secure_link,          // secure_link module: "1", "0" (expired) or the link (secure_link_secret)
  secure_link_expires,  // secure_link module: the expiry time the link carries
  uid_got,    // userid module: "NAME=HEX" of the cookie the client sent
  uid_set,    // userid module: "NAME=HEX" of the cookie this response sets
  modern_browser,   // browser module: modern_browser_value for a modern User-Agent
  ancient_browser,  // browser module: ancient_browser_value for an ancient one
  msie,             // browser module: "1" for MSIE (not Opera)
  uri,
  // Client identity (modules/realip/variables.cc).
  binary_remote_addr,
  proxy_protocol_addr,
  proxy_protocol_port,
  proxy_protocol_server_addr,
  proxy_protocol_server_port,
  realip_remote_addr,
  realip_remote_port,
  // stub_status (modules/stub_status/stub_status.cc).
  connections_active,
  connections_reading,
  connections_waiting,
  connections_writing,
  // Client certificates (modules/client_cert/client_cert.cc).
  ssl_client_cert,
  ssl_client_escaped_cert,
  ssl_client_fingerprint,
  ssl_client_i_dn,
  ssl_client_raw_cert,
  ssl_client_s_dn,
  ssl_client_serial,
  ssl_client_v_end,
  ssl_client_v_remain,
  ssl_client_v_start,
  ssl_client_verify,
};

inline constexpr uint32_t kNoSlot = UINT32_MAX;

struct Variable {
  VarId id;
  std::string arg;
  uint32_t index = 0;  // user_: the per-request slot (Config::variables); geoip_: the field
  // map_, geo_, split_clients_: the `set` slot of the same name, when a
  // `set` (auth_request_set, a named capture) writes this variable too.
  // Once written in a request it stands for the block's value there, as
  // nginx's changeable variables do; kNoSlot when nothing writes it.
  uint32_t set_slot = kNoSlot;
};

struct TemplatePart {
  bool is_variable = false;
  std::string literal;  // when !is_variable
  Variable variable{};  // when is_variable
};

struct Template {
  std::string source;  // as written in the config
  std::vector<TemplatePart> parts;
  bool empty() const { return source.empty(); }
  bool is_constant() const { return parts.size() <= 1 && (parts.empty() || !parts[0].is_variable); }
};

// A template of `text` alone, read as no variables (a built-in default).
Template literal_template(std::string_view text);

// Parses "$name", "${name}" and literals. Unknown names are an error
// ("unknown \"foo\" variable", as nginx says it).
Result<Template> compile_template(std::string_view text);

// Name -> id for plain variables and prefix families; false if unknown.
bool lookup_variable(std::string_view name, Variable& out);

// The per-request slot a `set` of `v` writes: a `set` variable's own, or
// the one that stands for a block variable's value; false for a variable
// that cannot be set (built in, or a block's that no `set` names).
bool settable_slot(const Variable& v, uint32_t& slot);

// Variables a config defines (map {}), known to lookup_variable while that
// config compiles on this thread; cleared when a compile starts.
void define_variable(const std::string& name, size_t map_index, VarId id = VarId::map_);
// Declares, before anything compiles, the variable a map {}, geo {} or
// split_clients {} block will define, with the slot it will take, so a
// template written earlier in the file than the block may read it, as in
// nginx. The block's own compile then defines it.
void declare_variable(const std::string& name, size_t index, VarId id);
// True when `name` is already a variable (built in, `set`, or another
// block's); a name only declared for the block now compiling is not.
bool variable_taken(std::string_view name);
// False if a declared block never compiled or took another slot than the
// one declared (the declaring pass and the compile disagree).
bool declarations_kept();
void clear_defined_variables();

// Variables of the rewrite module (`set $name`, named captures
// `(?<name>...)`): each name gets a slot, the same for every use, known to
// lookup_variable for the rest of the compile. Returns the slot.
uint32_t define_user_variable(std::string_view name);
// Names of the slots defined since clear_defined_variables(), by slot.
const std::vector<std::string>& user_variable_names();
// True for the names of built-in variables (`set` may not redefine them,
// except $args, which it changes).
bool is_builtin_variable(std::string_view name);
// True when a template compiled since clear_defined_variables() reads the
// upstream's response headers ($upstream_http_*, $upstream_cookie_*): only
// then does the proxy keep a copy of them.
bool upstream_headers_used();
// The same for $upstream_bytes_sent and $upstream_bytes_received: only then
// does the proxy write each try's counts out as text.
bool upstream_bytes_used();

}  // namespace torii::config
