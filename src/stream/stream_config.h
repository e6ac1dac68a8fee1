// The `stream {}` block (nginx's ngx_stream_* modules): TCP proxying with
// its own servers, upstream groups, log formats and variables. Compiled
// once with the rest of the config (stream/compile.cc) and immutable; the
// workers run it through stream::StreamWorker.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "net/ip_address.h"
#include "config/map_table.h"
#include "config/split_clients_config.h"
#include "config/upstream_bind.h"
#include "config/upstream_config.h"
#include "modules/geoip2/lookup.h"

namespace torii::log {
struct SyslogTarget;
}
namespace torii::dns {
struct ResolverConfig;
}
namespace torii::limits {
class ConnTable;
}
namespace torii::geoip2 {
class Database;
}
namespace torii::config {
struct GeoConfig;
struct SslServerConfig;
struct UpstreamTlsConfig;
}

namespace torii::stream {

using config::Ms;

// The variables a stream template may read (ngx_stream_variables.c and the
// modules' own), plus `set` slots.
enum class Var : uint8_t {
  remote_addr,
  remote_port,
  realip_remote_addr,  // the peer before set_real_ip_from replaced it
  realip_remote_port,
  binary_remote_addr,
  server_addr,
  server_port,
  protocol,
  status,
  bytes_sent,
  bytes_received,
  session_time,
  upstream_addr,
  upstream_bytes_sent,
  upstream_bytes_received,
  upstream_connect_time,
  upstream_first_byte_time,
  upstream_session_time,
  time_local,
  time_iso8601,
  connection,
  hostname,
  msec,
  pid,
  nginx_version,
  proxy_protocol_addr,  // listen ... proxy_protocol: what the header said
  proxy_protocol_port,
  proxy_protocol_server_addr,
  proxy_protocol_server_port,
  ssl_preread_server_name,  // ssl_preread on: what the ClientHello said
  ssl_preread_protocol,
  ssl_preread_alpn_protocols,
  ssl_protocol,  // listen ... ssl: the handshake's facts
  ssl_cipher,
  ssl_server_name,
  ssl_session_reused,
  ssl_alpn_protocol,
  ssl_session_id,
  ssl_curve,
  ssl_curves,
  ssl_client_verify,
  ssl_client_s_dn,
  ssl_client_i_dn,
  ssl_client_s_dn_legacy,
  ssl_client_i_dn_legacy,
  ssl_client_raw_cert,
  ssl_client_cert,
  ssl_client_escaped_cert,
  ssl_client_fingerprint,
  ssl_client_serial,
  ssl_client_v_start,
  ssl_client_v_end,
  ssl_client_v_remain,
  ssl_ciphers,
  limit_conn_status,  // PASSED, REJECTED, REJECTED_DRY_RUN
  geo_,    // a `geo` variable: `index` is its place in StreamConfig::geos
  split_,  // a `split_clients` variable: `index` is its place in StreamConfig::split_clients
  geoip_,  // $geoip_*: `index` is the geoip::Field (ngx_stream_geoip_module)
  geoip2_,  // a geoip2 {} variable: `index` is its place in StreamConfig::geoip2_variables
  capture_,  // $1..$9 or a (?<name>) group of the map regex whose value reads it: `index` is the group
  map_,   // a `map` variable: `index` is its place in StreamConfig::maps
  user_,  // a `set` variable: `index` is its slot
};

inline constexpr uint32_t kNoSetSlot = UINT32_MAX;

struct TemplatePart {
  bool is_variable = false;
  std::string literal;
  Var var = Var::remote_addr;
  uint32_t index = 0;
  // A map, geo or split_clients variable that a `set` also writes: once the
  // set ran in the session, its value is the set's (as nginx's changeable
  // variables).
  uint32_t set_slot = kNoSetSlot;
};

// A string with $variables, as config::Template is for http.
struct Template {
  std::string source;
  std::vector<TemplatePart> parts;
  bool is_constant() const { return parts.size() <= 1 && (parts.empty() || !parts[0].is_variable); }
};

struct LogFormat {
  std::string name;
  Template format;
  bool json_escape = false;
  bool escape_none = false;
};

struct AccessLog {
  std::string path;  // absolute, or "syslog:..." as written
  // With variables in the path, a file per session; relative to `prefix`.
  std::optional<Template> path_template;
  std::string prefix;
  std::shared_ptr<const LogFormat> format;
  config::LogBuffering buffering;
  std::shared_ptr<const log::SyslogTarget> syslog;
  std::optional<Template> condition;  // if=: skipped when empty or "0"
};

// An `upstream {}` of the stream block: the http code's group (servers,
// balancer, parsed by the same `server` line reader) and the hash key in
// stream variables.
struct Upstream {
  std::shared_ptr<config::UpstreamGroupConfig> group;
  Template hash_key;
  bool per_session = false;  // made by `proxy_pass $var` for one session's address
};

// A `map {}` of the stream block: http's table (config/map_table.h) with
// stream templates for the source and the values.
struct Map : config::MapTable<Template> {
  std::string name;  // without '$'
  Template source;
};

// A `split_clients STRING $name { ... }` of the stream block: http's parts
// (modules/split_clients: nginx's MurmurHash2 bounds), a stream template
// for the string.
struct SplitClients {
  std::string name;  // without '$'
  Template key;
  std::vector<config::SplitClientsConfig::Part> parts;
};

// A `geo [$address] $name { ... }` of the stream block: http's tables
// (config::GeoConfig, read by modules/geo), the client's address or a
// stream template naming one.
struct Geo {
  std::string name;  // without '$'
  std::optional<Template> source;
  std::shared_ptr<const config::GeoConfig> table;
};

// A variable of a `geoip2 FILE { ... }` of the stream block: the lookup
// (modules/geoip2, shared with http) and source='s stream template.
struct Geoip2 {
  geoip2::Lookup lookup;
  std::optional<Template> source;
};

struct SetStep {
  uint32_t slot = 0;
  Template value;
};

// limit_conn_zone KEY zone=NAME:SIZE of the stream block: the http
// module's counting table (process-wide, kept across a reload), a stream
// template for the key. Named but not yet defined until its line is read.
struct ConnZone {
  std::string name;
  size_t size = 0;
  Template key;
  bool defined = false;
  std::shared_ptr<limits::ConnTable> table;
};

struct ConnLimit {
  std::shared_ptr<const ConnZone> zone;
  uint32_t conn = 0;
};

// proxy_upload_rate / proxy_download_rate: bytes a second, 0 for none; with
// variables, the value is rendered when the session starts proxying.
struct Rate {
  uint64_t bytes = 0;
  std::optional<Template> value;
};

// Settings a stream server inherits from the stream block (nginx merges
// stream -> server), nginx's defaults.
struct Settings {
  Ms connect_timeout{60'000};
  Ms timeout{600'000};  // proxy_timeout: idle between two successive reads or writes
  bool next_upstream = true;
  unsigned next_upstream_tries = 0;  // 0: as many as the group has
  Ms next_upstream_timeout{0};       // 0: unlimited
  size_t buffer_size = 16 * 1024;
  Rate upload_rate;    // client -> upstream
  Rate download_rate;  // upstream -> client
  // UDP sessions: proxy_requests (0: unlimited) and proxy_responses (-1:
  // unset, the session ends only by proxy_timeout).
  uint64_t requests = 0;
  int64_t responses = -1;
  bool proxy_protocol = false;  // send a PROXY v1 header to the upstream first
  bool half_close = false;      // proxy_half_close: a FIN is passed on, the other way keeps flowing
  bool socket_keepalive = false;
  bool tcp_nodelay = true;
  size_t preread_buffer_size = 16 * 1024;
  Ms preread_timeout{30'000};
  Ms proxy_protocol_timeout{30'000};  // reading a `listen ... proxy_protocol` header
  std::shared_ptr<const config::UpstreamBind> bind;  // proxy_bind
  std::shared_ptr<const dns::ResolverConfig> resolver;
  Ms resolver_timeout{30'000};
  std::vector<AccessLog> access_logs;
  bool access_log_off = false;
  std::vector<config::AccessRule> access_rules;  // allow/deny in order
  // set_real_ip_from (ngx_stream_realip_module): a peer in these sends the
  // client's address in its PROXY header, which then is $remote_addr.
  std::vector<net::Cidr> realip_from;
  // limit_conn ZONE NUMBER (ngx_stream_limit_conn_module), checked before
  // allow/deny; a session over a limit ends with 503.
  std::vector<ConnLimit> conn_limits;
  config::LogLevel conn_log_level = config::LogLevel::error;
  bool conn_dry_run = false;
  // error_log FILE [LEVEL] of the server or the stream block: the sessions'
  // lines go there (log/server_error_logs); -1: the process's error log.
  int error_log_fd = -1;
  config::LogLevel error_log_level = config::LogLevel::error;
  bool ssl_preread = false;  // read the ClientHello before the handler (ngx_stream_ssl_preread_module)
  Ms ssl_handshake_timeout{60'000};
  // The ssl_* settings: the http ssl module's object, read by its own
  // directive setters; its context is built at load for servers with
  // `listen ... ssl`. Null: none written.
  std::shared_ptr<const config::SslServerConfig> ssl;
  std::string alpn;  // ssl_alpn: the protocols offered, in ALPN wire format; empty: no ALPN
  // proxy_ssl on: TLS to the upstream with the proxy_ssl_* settings (the
  // http proxy's object and context); proxy_ssl_name in stream variables.
  bool proxy_ssl = false;
  std::shared_ptr<const config::UpstreamTlsConfig> proxy_tls;
  std::optional<Template> proxy_ssl_name;
};

struct Server {
  std::vector<config::Listen> listens;
  std::string file;
  int line = 0;
  Settings settings;
  std::vector<SetStep> sets;  // `set`, in order, before the content handler
  // The content handler: proxy_pass to a group, to a rendered target, or return.
  std::shared_ptr<const Upstream> pass;
  std::optional<Template> pass_template;  // proxy_pass with variables
  std::optional<Template> return_value;
};

// One listening address and the server that answers on it (stream has
// no server names: one server per address).
struct ListenGroup {
  config::Listen listen;
  std::shared_ptr<const Server> server;
};

struct StreamConfig {
  std::vector<std::shared_ptr<const Server>> servers;
  std::vector<ListenGroup> listen_groups;
  std::vector<std::shared_ptr<const Upstream>> upstreams;
  std::vector<std::shared_ptr<const Map>> maps;  // by Var::map_ index
  std::vector<std::shared_ptr<ConnZone>> conn_zones;
  std::vector<std::shared_ptr<const SplitClients>> split_clients;  // by Var::split_ index
  std::vector<std::shared_ptr<const Geo>> geos;                    // by Var::geo_ index
  std::vector<std::string> variables;  // `set` names by slot
  // geoip_country, geoip_org, geoip_city of the stream block (no proxies
  // here); null without them.
  std::shared_ptr<const config::GeoIpConfig> geoip;
  // geoip2 {} blocks of the stream block: their files (each once, checked
  // by auto_reload when a session ends) and variables.
  std::vector<std::shared_ptr<geoip2::Database>> geoip2_databases;
  std::vector<std::shared_ptr<const Geoip2>> geoip2_variables;  // by Var::geoip2_ index
  // Some template reads $ssl_ciphers: only then is the client's list (a
  // few hundred bytes) written out at each TLS handshake.
  bool reads_ssl_ciphers = false;
};

}  // namespace torii::stream
