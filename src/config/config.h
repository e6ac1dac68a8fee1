// The typed, validated, immutable configuration. Built once from the nginx-
// syntax files by config::load(); workers hold it by shared_ptr<const Config>
// and a reload swaps in a new one. Every setting is already merged down the
// http -> server -> location chain, so a request reads its location's values
// directly.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/core_settings.h"
#include "config/dav_config.h"
#include "config/dav_ext_config.h"
#include "config/limits_config.h"
#include "config/mp4_config.h"
#include "config/process_settings.h"
#include "config/template.h"
#include "core/result.h"
#include "http/method.h"

namespace torii::log {
struct SyslogTarget;
}
namespace torii::rewrite {
struct Program;  // modules/rewrite/program.h: compiled rewrite-module directives
}

namespace torii::dns {
struct ResolverConfig;  // dns/resolver_config.h: the `resolver` directive
}
namespace torii::stream {
struct StreamConfig;  // stream/stream_config.h: the stream {} block
}

namespace torii::config {

using Ms = std::chrono::milliseconds;

enum class LogLevel : uint8_t { debug, info, notice, warn, error, crit, alert, emerg };

class Regex;  // PCRE2 wrapper, config/regex.h

// Module settings, each defined in its own header so modules stay apart.
struct SslServerConfig;      // config/ssl_config.h: certificates, protocols, session cache
struct ProxyConfig;          // config/proxy_config.h: proxy_pass and the proxy_* directives
struct CgiConfig;            // config/cgi_config.h: fastcgi_* and uwsgi_*
struct UpstreamGroupConfig;  // config/upstream_config.h: an upstream {} block
struct MapConfig;            // config/map_config.h: a map {} block
struct CompressionConfig;    // config/compression_config.h: gzip, brotli, zstd
struct RealIpConfig;         // config/realip_config.h: set_real_ip_from, real_ip_*
struct AutoindexConfig;      // config/autoindex_config.h: autoindex*
struct SubFilterConfig;      // config/sub_filter_config.h: sub_filter*
struct SsiConfig;            // config/ssi_config.h: ssi*, add_*_body
struct RefererConfig;        // config/referer_config.h: valid_referers
struct BrowserConfig;        // config/browser_config.h: modern_browser, ancient_browser
struct SecureLinkConfig;     // config/secure_link_config.h: secure_link*
struct UseridConfig;         // config/userid_config.h: userid*
struct HeadersMoreConfig;    // config/headers_more_config.h: more_set_headers and the like
struct ImageFilterConfig;    // config/image_filter_config.h: image_filter*
struct SplitClientsConfig;   // config/split_clients_config.h: split_clients {}
struct CachePurgeLocation;   // config/cache_config.h: proxy_cache_purge ZONE KEY
struct GeoConfig;            // config/geo_config.h: a geo {} block
struct GeoIpConfig;          // config/geoip_config.h: geoip_country, geoip_city, geoip_org, geoip_proxy
struct Geoip2Config;         // config/geoip2_config.h: geoip2 {}, geoip2_proxy
struct CacheZoneConfig;      // config/cache_config.h: a proxy_cache_path zone
struct MirrorConfig;         // config/mirror_config.h: mirror, mirror_request_body
struct CharsetMap;           // config/charset_config.h: a charset_map {} block

// http2_* directives, nginx's defaults.
struct Http2Settings {
  uint32_t max_concurrent_streams = 128;
  size_t chunk_size = 8 * 1024;
  size_t recv_buffer_size = 256 * 1024;
  size_t body_preread_size = 64 * 1024;
};

// http3_* and quic_* directives, nginx's defaults (plus torii's own
// http3_alt_svc).
struct Http3Settings {
  bool enabled = true;       // `http3`: nginx's default is on (it applies to quic listens)
  bool explicit_on = false;  // `http3 on` written: this server's `listen ... ssl` addresses answer QUIC too
  uint32_t max_concurrent_streams = 128;
  size_t stream_buffer_size = 64 * 1024;
  bool retry = false;
  bool gso = false;
  std::string host_key;  // quic_host_key: the key file's bytes; empty: a random key per process
  uint32_t active_connection_id_limit = 2;
  bool alt_svc = true;  // http3_alt_svc: Alt-Svc on responses over TCP
  bool hq = false;      // http3_hq: the hq-interop ALPN (HTTP/0.9 over QUIC) as well
};

struct ErrorLogConfig {
  std::string path;  // absolute; "stderr" for the terminal; "syslog:..." as written
  LogLevel level = LogLevel::error;
  std::shared_ptr<const log::SyslogTarget> syslog = nullptr;  // set for "syslog:..."
  // Another error_log of the same http, server or location block: a line
  // goes to each log whose level it reaches, as nginx's.
  std::shared_ptr<const ErrorLogConfig> also = nullptr;
};

struct LogFormat {
  std::string name;
  Template format;
  bool json_escape = false;  // escape=json
  bool escape_none = false;  // escape=none; neither: nginx's default \xXX escaping
  bool builtin = false;      // torii's "json": a log_format of that name replaces it
};

// An access_log's buffer=, flush= and gzip[=LEVEL]: each worker gathers
// lines and writes them when the buffer is full or flush= old; with gzip
// each write is one complete gzip member (zcat reads the file whole).
struct LogBuffering {
  size_t size = 0;  // 0: each line is written at once
  Ms flush{0};
  int gzip_level = 0;  // 0: plain text
  bool operator==(const LogBuffering&) const = default;
};

struct AccessLog {
  std::string path;  // absolute, or "syslog:..." as written
  std::shared_ptr<const LogFormat> format;
  LogBuffering buffering;
  std::shared_ptr<const log::SyslogTarget> syslog = nullptr;  // set for "syslog:..."
  // if=CONDITION: the line is skipped when it renders empty or "0".
  std::optional<Template> condition = std::nullopt;
  // A path with variables, rendered per request (relative: from the
  // prefix); the file is opened for each line, as nginx without
  // open_log_file_cache, and only while the request's root exists.
  Template path_template = {};
};

struct AddHeader {
  // How the line meets the response's own field of that name: validators
  // (Last-Modified, ETag) are replaced or, with an empty value, removed;
  // a Content-Type replaces the default; any other field is added.
  enum class Kind : uint8_t { other, validator, content_type };
  std::string name;
  Template value;
  bool always = false;
  Kind kind = Kind::other;  // from the name, once at load
};

struct ErrorPage {
  std::vector<int> codes;
  int response_code = -1;  // -1: keep the original; 0: "=" (the target's); else =CODE
  Template uri;            // "/50x.html", "@named" or an absolute URL (redirect)
};

struct Return {
  int code = 0;   // 444 closes the connection
  Template text;  // body for most codes, URL for 301/302/303/307/308
  bool has_text = false;
};

struct AccessRule {
  bool allow = false;
  bool all = false;
  int family = AF_INET;
  uint8_t addr[16] = {};
  uint8_t mask[16] = {};
};

struct Location;

struct LimitExcept {
  std::vector<http::Method> methods;  // GET implies HEAD
  // What a method not listed runs under, as nginx's limit_except block (a
  // location of its own): the location's settings with the block's lines
  // applied (allow/deny replacing the location's rules, auth_basic,
  // proxy_pass, access_log); no rewrite directives or try_files.
  std::shared_ptr<const Location> location;
};

struct Expires {
  enum class Kind : uint8_t { off, epoch, max, after_access, after_modified, daily };
  Kind kind = Kind::off;
  int64_t seconds = 0;  // may be negative; daily: the time of day
  // A value with variables, parsed per request (config/expires.h); `kind`
  // is then after_access or after_modified, as written.
  Template value;
};

struct OpenFileCache {
  bool enabled = false;
  size_t max = 0;
  Ms inactive{60'000};
  Ms valid{60'000};
  unsigned min_uses = 1;
  bool errors = false;
};

// disable_symlinks: how the static handler may cross symbolic links
// (handlers/symlink_walk.h); `from` is rendered per request.
struct DisableSymlinks {
  enum class Mode : uint8_t { off, on, if_not_owner };
  Mode mode = Mode::off;
  std::optional<Template> from;
};

using MimeTypes = std::unordered_map<std::string, std::string>;  // ext (lower) -> type

// Settings a location inherits from its server and the http block.
struct LocationSettings {
  std::string root = "html";  // absolute after load (prefix applied)
  std::string alias;          // non-empty: alias instead of root
  // Where the alias was set, as nested locations inherit it: a prefix
  // (or exact) location's pattern, which the alias takes the place of in
  // the URI; or a regex location, where the alias names the whole file.
  std::string alias_prefix;
  bool alias_names_file = false;
  // root/alias with variables, rendered per request (http/document_root.h);
  // root and alias then keep the text as written.
  Template root_template;
  Template alias_template;
  std::vector<Template> index{literal_template("index.html")};  // may hold variables
  std::vector<Template> try_files;  // empty: off; last may be "=CODE"
  // The location's rewrite-module directives (return, rewrite, set, if,
  // break) in the order written; null when it has none. Not inherited.
  std::shared_ptr<const rewrite::Program> rewrite;
  bool rewrite_log = false;                 // notice-level lines for each rewrite
  bool uninitialized_variable_warn = true;  // warn when an unset `set` variable is read
  std::vector<ErrorPage> error_pages;
  bool recursive_error_pages = false;  // an error_page target's own error may redirect again
  std::vector<AddHeader> add_headers;  // inherited only when none at this level (add_header_inherit on)
  std::vector<AddHeader> add_trailers;  // add_trailer: likewise (modules/trailers)
  // add_header_inherit / add_trailer_inherit: whether a block takes the
  // outer block's lines (on: only with none of its own; merge: after its
  // own; off: never). Inherited as a setting.
  enum class FieldInherit : uint8_t { off, on, merge };
  FieldInherit add_header_inherit = FieldInherit::on;
  FieldInherit add_trailer_inherit = FieldInherit::on;
  Expires expires;
  std::shared_ptr<const LimitExcept> limit_except;  // not inherited
  std::vector<AccessRule> access_rules;            // inherited only when none here
  std::shared_ptr<const MimeTypes> types;
  std::string default_type = "text/plain";
  bool sendfile = false;
  int64_t read_ahead = 0;  // read_ahead: > 0 asks the kernel for sequential read-ahead (handlers/static_file.cc)
  bool tcp_nopush = false;
  bool tcp_nodelay = true;
  Ms keepalive_timeout{75'000};
  Ms keepalive_header{0};  // second keepalive_timeout argument; 0: no header
  uint64_t keepalive_requests = 1000;
  CoreSettings core;  // keepalive_time and other http-core details (core_settings.h)
  int64_t client_max_body_size = 1 << 20;  // 0: unlimited
  size_t client_body_buffer_size = 16 * 1024;
  std::string client_body_temp_path;  // "<prefix>client_body_temp" after load
  std::array<uint8_t, 3> client_body_temp_levels{};  // its LEVEL arguments (core/temp_file); 0: none
  Ms client_body_timeout{60'000};
  Ms send_timeout{60'000};
  bool server_tokens = true;
  bool access_log_off = false;
  std::vector<AccessLog> access_logs;
  std::optional<ErrorLogConfig> error_log;  // request-level messages; else main's
  std::shared_ptr<const ProxyConfig> proxy;  // set: proxy_pass is this location's handler
  std::shared_ptr<const CgiConfig> fastcgi;  // fastcgi_*: with upstream set, fastcgi_pass is the handler
  std::shared_ptr<const CgiConfig> uwsgi;    // uwsgi_*, the same
  std::shared_ptr<const CgiConfig> scgi;     // scgi_*, the same
  std::shared_ptr<const CgiConfig> grpc;     // grpc_*: with upstream set, grpc_pass is the handler (no params)
  std::shared_ptr<const CgiConfig> memcached;  // memcached_*: with upstream set, memcached_pass is the handler
  std::shared_ptr<const CompressionConfig> compression;  // null: no gzip/brotli/zstd directive here
  OpenFileCache open_file_cache;
  DisableSymlinks disable_symlinks;
  bool log_not_found = true;
  bool etag = true;
  bool metrics = false;  // metrics: this location serves the Prometheus text
  enum class Api : uint8_t { off, read_only, read_write };
  Api api = Api::off;    // api [write=on]: this location serves the admin API (modules/admin_api)
  bool internal = false;  // only reachable by internal redirect
  DavSettings dav;  // dav_methods, dav_access, min_delete_depth, create_full_put_path (modules/dav)
  DavExtSettings dav_ext;  // dav_ext_methods, dav_ext_lock (modules/dav_ext)
  std::shared_ptr<const dns::ResolverConfig> resolver;  // null: no `resolver` here
  // Redirects torii writes (directory slash, return, error_page): nginx's
  // absolute_redirect, port_in_redirect, server_name_in_redirect.
  bool absolute_redirect = true;
  bool port_in_redirect = true;
  bool server_name_in_redirect = false;
  bool reset_timedout_connection = false;  // a timed-out client gets a RST, not a FIN
  std::string charset;  // `charset`: added to Content-Type of charset_types; empty: off
  Template charset_template;  // `charset $var` (a map's): rendered per response
  std::shared_ptr<const std::vector<std::string>> charset_types;  // null: nginx's default list
  std::string source_charset;     // `source_charset`: what the body is in when the response does not say
  bool override_charset = false;  // `override_charset`: recode a response that names its charset too
  std::vector<Template> early_hints;  // `early_hints`: conditions, one non-empty and not "0" lets a 103 through
  // `client_body_early_read` (http, server): conditions, one non-empty and
  // not "0" reads the body before the location is chosen (modules/early_body).
  std::vector<Template> client_body_early_read;
  std::string post_action;  // `post_action`: a URI or @name run after the response (modules/post_action); empty: none
  Ms resolver_timeout{30'000};
  LimitsSettings limits;  // limit_req, limit_conn, limit_rate, auth_*, satisfy (limits_config.h)
  std::shared_ptr<const RealIpConfig> realip;        // null: no realip directive applies
  std::shared_ptr<const AutoindexConfig> autoindex;  // null: autoindex off
  bool stub_status = false;                          // this location answers with the status page
  int64_t slice_size = 0;  // `slice`: the response is fetched in parts this large (modules/slice); 0: off
  std::shared_ptr<const SubFilterConfig> sub_filter;  // null: no sub_filter* directive applies (modules/sub)
  std::shared_ptr<const SsiConfig> ssi;  // null: no ssi* or addition directive applies (modules/ssi, modules/addition)
  std::shared_ptr<const RefererConfig> referer;       // null: no valid_referers applies (modules/referer)
  std::shared_ptr<const BrowserConfig> browser;  // null: no *_browser* directive applies (modules/browser)
  std::shared_ptr<const SecureLinkConfig> secure_link;  // null: no secure_link* directive applies (modules/secure_link)
  std::shared_ptr<const MirrorConfig> mirror;  // null: no mirror* directive applies (modules/mirror)
  std::shared_ptr<const UseridConfig> userid;  // null: no userid* directive applies (modules/userid)
  std::shared_ptr<const HeadersMoreConfig> headers_more;  // null: no more_* directive applies (modules/headers_more)
  std::shared_ptr<const ImageFilterConfig> image_filter;  // null: no image_filter* line applies (modules/image_filter)
  bool empty_gif = false;  // `empty_gif`: this location answers with a 1x1 GIF (modules/empty_gif); not inherited
  // `proxy_cache_purge ZONE KEY` (and fastcgi/scgi/uwsgi): every request
  // here purges KEY from ZONE (cache/purge.h); not inherited.
  std::shared_ptr<const CachePurgeLocation> cache_purge_location;
  bool random_index = false;  // `random_index on`: a directory's URI goes to one of its files at random
  // `flv` / `mp4`: the location's content handler (modules/flv, modules/mp4); not inherited.
  PseudoStreaming pseudo_streaming = PseudoStreaming::off;
  Mp4Settings mp4;  // mp4_buffer_size, mp4_max_buffer_size, mp4_start_key_frame, mp4_limit_rate*
};

struct Location {
  enum class Match : uint8_t { exact, prefix, prefix_no_regex, regex, regex_icase, named };
  Match match = Match::prefix;
  std::string pattern;           // the uri, regex source, or "@name"
  std::shared_ptr<Regex> regex;  // for regex matches
  std::string file;
  int line = 0;
  LocationSettings settings;
  std::vector<std::shared_ptr<const Location>> children;  // nested, in file order
  // An `if` block inside a location: the settings a request runs under once
  // the condition held (match, pattern and regex are its location's).
  bool is_if = false;
  // nginx's auto_redirect: a "/foo/" location whose own block has a *_pass
  // answers a request for "/foo" with a 301 to "/foo/" (find_location).
  bool auto_redirect = false;
};

struct ServerName {
  enum class Kind : uint8_t { exact, wildcard_front, wildcard_back, regex };
  Kind kind = Kind::exact;
  std::string name;  // lower-case; for wildcards without the '*' part
  std::shared_ptr<Regex> regex;
  bool matches_bare = false;  // ".example.com": also the exact "example.com"
};

struct Listen {
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::string text;  // "127.0.0.1:8080", "[::]:80", for logs and -T
  bool default_server = false;
  bool reuseport = false;
  int backlog = 511;
  bool ipv6only = true;
  bool ssl = false;    // TLS on this address
  bool http2 = false;  // "listen ... http2" (nginx's older spelling of `http2 on`)
  bool quic = false;   // "listen ... quic": HTTP/3 over UDP on this address
  bool proxy_protocol = false;  // each connection starts with a PROXY protocol header
  bool udp = false;  // stream's "listen ... udp": datagrams, a session per client address
  // Socket options (net/listen_options): TCP_DEFER_ACCEPT for `deferred`
  // (the server's client_header_timeout in seconds, as nginx), TCP_FASTOPEN's
  // queue, SO_RCVBUF/SO_SNDBUF, and `so_keepalive`; 0 or -1: left as is.
  int defer_accept_seconds = 0;
  bool deferred = false;
  int fastopen = 0;
  int rcvbuf = 0;
  int sndbuf = 0;
  int so_keepalive = -1;  // -1: the system's; 0: off; 1: on
  int keepidle = 0, keepintvl = 0, keepcnt = 0;
};

struct LargeHeaderBuffers {
  size_t number = 4;
  size_t size = 8 * 1024;  // also the longest request line and header line
};

struct Server {
  std::vector<Listen> listens;
  std::vector<ServerName> names;  // first one is $server_name
  std::string file;
  int line = 0;
  // Used when no location matches, and as the parent of top-level locations.
  LocationSettings settings;
  // Server-level rewrite-module directives: run before location matching.
  std::shared_ptr<const rewrite::Program> rewrite;
  std::vector<std::shared_ptr<const Location>> locations;  // top level, in file order
  Ms client_header_timeout{60'000};
  size_t client_header_buffer_size = 1024;
  LargeHeaderBuffers large_client_header_buffers;
  std::shared_ptr<const SslServerConfig> ssl;  // ssl_* directives of this server
  bool http2 = false;                           // `http2 on`
  Http2Settings http2_settings;
  Http3Settings http3_settings;
  // `Alt-Svc` value for responses over TCP (h3=":PORT"; ma=86400), set at
  // load when this server answers HTTP/3 somewhere; empty otherwise.
  std::string alt_svc;
  bool ignore_invalid_headers = true;
  bool underscores_in_headers = false;
  bool merge_slashes = true;
  // max_headers: a request with more header fields is refused (400, nginx 1.27.0).
  size_t max_headers = 1000;
};

// All servers reachable on one address:port, with the one that answers when
// no name matches.
struct ListenGroup {
  Listen listen;  // the settings of the first listen of this address; listen.quic: UDP only
  // QUIC answers on this address over UDP: a `quic` listen, or a `listen
  // ... ssl` whose servers say `http3 on` (and no `quic` listen of the
  // same address exists).
  bool udp = false;
  std::vector<std::shared_ptr<const Server>> servers;
  std::shared_ptr<const Server> default_server;
};

struct Config {
  // main context
  std::string prefix;     // -p, with a trailing '/'
  std::string conf_file;  // absolute path of the main file
  bool metrics_enabled = false;  // some location has `metrics`: requests are counted
  bool api_enabled = false;      // some location has `api`: upstreams may change at run time
  std::string admin_token;       // admin_token_file's bearer token; empty: none asked
  int worker_processes = 1;  // "auto" resolved to the core count
  unsigned worker_connections = 512;
  // worker_shutdown_timeout: how long a graceful stop waits for open
  // connections before closing them; 0: as long as they last.
  int64_t worker_shutdown_timeout_ms = 0;
  uint64_t worker_rlimit_nofile = 0;  // 0: leave as is
  ProcessSettings process;  // worker_cpu_affinity, worker_priority, worker_rlimit_core, working_directory
  bool multi_accept = false;
  bool quic_bpf = false;  // a reuseport eBPF program steers QUIC datagrams to their worker
  std::string pid_path;  // absolute
  std::string user;      // accepted; warned about when not root
  ErrorLogConfig error_log;  // default "<prefix>logs/error.log" at error

  // http context
  std::map<std::string, std::shared_ptr<const LogFormat>> log_formats;  // has "combined"
  // Every access_log file the http block names (and the default one where
  // a server uses it), once each: created at start, -t and reload, as nginx
  // opens them all then (log/access_log_files).
  std::vector<std::string> access_log_files;
  // The files of error_logs in http, server and location blocks (a
  // request's messages go there): opened when the config loads, at start,
  // -t and reload, and kept (log/server_error_logs).
  std::vector<std::string> error_log_files;
  std::vector<std::shared_ptr<const Server>> servers;
  std::vector<ListenGroup> listen_groups;
  std::vector<std::shared_ptr<const UpstreamGroupConfig>> upstreams;
  std::vector<std::shared_ptr<const MapConfig>> maps;  // $name of map i: VarId::map_ with arg i
  std::vector<std::shared_ptr<LimitZone>> limit_zones;  // limit_req_zone, limit_conn_zone, by name
  std::vector<std::shared_ptr<CacheZoneConfig>> cache_zones;  // proxy_cache_path, by name
  std::vector<std::shared_ptr<DavExtLockZone>> dav_ext_zones;  // dav_ext_lock_zone, by name
  std::vector<std::shared_ptr<const GeoConfig>> geos;  // $name of geo i: VarId::geo_ with arg i
  std::shared_ptr<const GeoIpConfig> geoip;  // null: no geoip_* directive ($geoip_* not found)
  std::shared_ptr<const Geoip2Config> geoip2;  // null: no geoip2 block or geoip2_proxy line
  std::vector<std::shared_ptr<const SplitClientsConfig>> split_clients;  // $name of block i: VarId::split_clients_, arg i
  std::vector<std::string> variables;  // `set` variables and named captures, by slot (VarId::user_)
  bool keep_upstream_headers = false;  // some template reads $upstream_http_* / $upstream_cookie_*
  bool keep_upstream_bytes = false;    // some template reads $upstream_bytes_sent / _received
  // Charset names the config mentions (charset, source_charset): the ones
  // an upstream's X-Accel-Charset may name, as nginx's charset list.
  std::vector<std::string> charsets;
  std::vector<std::shared_ptr<const CharsetMap>> charset_maps;  // charset_map {} blocks (modules/charset)

  // stream {}: TCP proxying (src/stream/); null without the block.
  std::shared_ptr<const stream::StreamConfig> stream;

  // Every file read, in order, with its text: for `torii -T`.
  std::vector<std::pair<std::string, std::string>> sources;
};

// Reads and compiles a config. `prefix` ends with '/'. `extra` holds -g
// directives, parsed in the main context after the file. `error_log` (-e)
// replaces the default main error log, logs/error.log ("stderr": the
// terminal), where the file sets none. Errors read "FILE:LINE: message"
// (with the directive's name in the message).
Result<std::shared_ptr<const Config>> load(const std::string& path, const std::string& prefix,
                                           const std::string& extra, const std::string& error_log = "");

// Warnings produced while loading (e.g. "user" when not root), FILE:LINE first.
// Filled by load(); read by the caller to log them.
std::vector<std::string>& load_warnings();

// nginx's server selection: exact name, longest leading wildcard, longest
// trailing wildcard, first matching regex, then the group's default server.
// `host` is already lower-cased and without port.
const Server& find_server(const ListenGroup& group, std::string_view host);

// Regex captures set by location or server_name matching ($1..$9).
struct Captures {
  std::string subject;
  std::vector<std::pair<int, int>> spans;  // [0] is the whole match
  std::string_view get(size_t i) const;
};

// nginx's location selection on a decoded path: exact match wins at once;
// else the longest prefix; if it is ^~ it wins, else regexes (nested ones
// of the longest prefix first, then top-level in file order) are tried and
// the first match wins; else the longest prefix. Returns nullptr if nothing
// matches. Named locations are never matched here. `slash_redirect`, when
// given, tells whether the path is a location's without its trailing slash
// and that location redirects there (auto_redirect): the location returned
// is then that one, and the request gets the 301.
const Location* find_location(const Server& server, std::string_view path, Captures* captures,
                              bool* slash_redirect = nullptr);

// A named location ("@name") of the server, or nullptr.
const Location* find_named_location(const Server& server, std::string_view name);

// Extension (without dot, any case) -> MIME type from the location's types,
// falling back to default_type.
std::string_view mime_type(const LocationSettings& s, std::string_view path);

}  // namespace torii::config
