// The directive table and the compiler that walks the syntax tree with it.
// Each directive is one row: name, the contexts it may appear in, its
// arity and a setter. Settings inherit by copy: a child block starts from
// its parent's merged settings, so every block's plain directives run
// before its server/location children (nginx's order-free merge).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/ast.h"
#include "config/config.h"
#include "core/result.h"

namespace torii::geoip {
class Database;
}

namespace torii::config {

enum Context : uint16_t {
  kMain = 1 << 0,
  kEvents = 1 << 1,
  kHttp = 1 << 2,
  kServer = 1 << 3,
  kLocation = 1 << 4,
  kLimitExcept = 1 << 5,
  kTypes = 1 << 6,
  kUpstream = 1 << 7,
  kServerIf = 1 << 8,    // an `if` block at server level: rewrite-module directives only
  kLocationIf = 1 << 9,  // an `if` block in a location (nginx's "LIF" directives)
};

enum Arity : uint16_t {
  kArgs0 = 1 << 0,
  kArgs1 = 1 << 1,
  kArgs2 = 1 << 2,
  kArgs3 = 1 << 3,
  kArgs4 = 1 << 4,
  kArgs1More = 1 << 5,
  kArgs2More = 1 << 6,
  kFlag = 1 << 7,   // exactly "on" or "off"
  kBlock = 1 << 8,  // takes a { } body
};

class Compiler;
struct UpstreamGroupConfig;

// One block being compiled and what its directives write into.
struct Scope {
  Context ctx = kMain;
  LocationSettings* settings = nullptr;  // http prototype, server or location
  Server* server = nullptr;              // http prototype or server; null in location
  Location* location = nullptr;
  LimitExcept* limit_except = nullptr;
  MimeTypes* types = nullptr;  // the table a `types` block's lines go into
  // This block's own table: a second `types` block here adds to it, as
  // nginx's; an inherited one is replaced (directives.cc, set_types).
  std::shared_ptr<MimeTypes> types_here;
  std::vector<std::string_view> seen;  // unique directives already set here
  // The values so far of the directives a repeat adds to (nginx's bitmask
  // and type-list ones, ssl_session_cache), by name: a second line runs the
  // setter again with the first's values and its own (loader.cc).
  std::unordered_map<std::string_view, std::vector<std::string>> values_so_far;
  // Array directives replace what was inherited at their first use here.
  bool add_header_here = false;
  bool error_log_here = false;  // an error_log line of this block was read: the next one joins it
  bool add_trailer_here = false;
  // The outer block's lines, set aside by the first add_header/add_trailer
  // here (add_header_inherit merge appends them: header_inheritance.cc).
  std::vector<AddHeader> outer_headers;
  std::vector<AddHeader> outer_trailers;
  bool access_rules_here = false;
  bool error_page_here = false;
  bool index_here = false;
  bool access_log_here = false;
  uint32_t proxy_here = 0;  // proxy_* array directives set in this block (directives_proxy.cc)
  uint32_t cgi_here = 0;    // fastcgi_*/uwsgi_* array directives set here (directives_cgi.h)
  // The rewrite program this block's return/rewrite/set/if/break append to
  // (directives_rewrite.cc); an `if` body shares its block's.
  std::shared_ptr<rewrite::Program> program;
  // Work that needs this block's settings complete (an `if` block's own
  // settings start from them): run after the plain directives, before children.
  std::vector<std::function<Status()>> after_plain;
  uint32_t limits_here = 0;  // limit_req, limit_conn set in this block (directives_limits.cc)
  bool realip_from_here = false;  // set_real_ip_from replaced the inherited list (directives_realip.cc)
  uint32_t compression_here = 0;  // gzip_types, gzip_disable... set in this block (directives_gzip.cc)
  uint32_t sub_filter_here = 0;   // sub_filter, sub_filter_types set in this block (directives_sub.cc)
  uint32_t ssi_here = 0;          // ssi_types, addition_types set in this block (directives_ssi.cc)
  bool referer_here = false;        // valid_referers set in this block (directives_referer.cc)
  bool referer_regex_here = false;  // and one of its lines had a regex
  uint32_t secure_link_here = 0;    // secure_link* set in this block (directives_secure_link.cc)
  bool mirror_here = false;         // `mirror` set in this block (directives_mirror.cc)
  bool dav_methods_here = false;    // dav_methods replaced the inherited set (directives_dav.cc)
  bool dav_ext_methods_here = false;  // dav_ext_methods replaced the inherited set (directives_dav_ext.cc)
  bool dav_ext_lock_here = false;   // dav_ext_lock set in this block: a second is a duplicate
  bool userid_flags_here = false;   // userid_flags replaced the inherited set (directives_userid.cc)
  bool image_filter_here = false;   // image_filter set in this block (directives_image_filter.cc)
  uint32_t browser_here = 0;        // modern_browser / ancient_browser lines in this block (directives_browser.cc)
};

struct DirectiveSpec {
  std::string_view name;
  uint16_t contexts;
  uint16_t arity;
  bool unique;            // a second one in the same block is "duplicate"
  bool child_scope;       // server/location: compiled after the plain directives
  Context inner;          // context of a block's children
  Status (*set)(Compiler& c, Scope& scope, const Node& n);
};

const DirectiveSpec* find_directive(std::string_view name);

// Adds an access_log file to Config::access_log_files (once).
void note_access_log_file(Config& cfg, const std::string& path);

// Each module's directive table lives in its own file.
std::span<const DirectiveSpec> ssl_directives();    // directives_ssl.cc
std::span<const DirectiveSpec> proxy_directives();  // directives_proxy.cc
std::span<const DirectiveSpec> proxy_ssl_directives();  // directives_proxy_ssl.cc
std::span<const DirectiveSpec> http2_directives();  // directives_http2.cc
std::span<const DirectiveSpec> http3_directives();  // directives_http3.cc
std::span<const DirectiveSpec> gzip_directives();     // directives_gzip.cc (gzip, brotli, zstd)
std::span<const DirectiveSpec> rewrite_directives();  // directives_rewrite.cc
std::span<const DirectiveSpec> resolver_directives();  // directives_resolver.cc
// Small core and module directives with nginx's meaning (directives_small.cc).
std::span<const DirectiveSpec> small_directives();
// http-core directives kept in CoreSettings (directives_core_extra.cc).
std::span<const DirectiveSpec> core_extra_directives();
// max_headers, keepalive_min_timeout, client_body_in_*... (directives_core_tuning.cc).
std::span<const DirectiveSpec> core_tuning_directives();
// source_charset, override_charset, charset_map (directives_charset.cc).
std::span<const DirectiveSpec> charset_directives();
// `charset` or `source_charset` written in this block: once its plain
// directives have run, a pair of fixed charsets that differ needs a
// charset_map between them, or the config is refused (nginx's check).
void check_charset_pair_later(Compiler& c, Scope& s, const Node& n);
// ssl_certificate_cache and its proxy_/grpc_/uwsgi_ forms (directives_certificate_cache.cc).
std::span<const DirectiveSpec> certificate_cache_directives();
// load_module, env, open_log_file_cache (directives_nginx_compat.cc).
std::span<const DirectiveSpec> nginx_compat_directives();
std::span<const DirectiveSpec> limits_directives();   // directives_limits.cc (limit_req, limit_conn, limit_rate)
std::span<const DirectiveSpec> auth_directives();     // directives_auth.cc (auth_basic, auth_request, satisfy)
std::span<const DirectiveSpec> fastcgi_directives();  // directives_fastcgi.cc
std::span<const DirectiveSpec> uwsgi_directives();    // directives_uwsgi.cc
std::span<const DirectiveSpec> scgi_directives();     // directives_scgi.cc
std::span<const DirectiveSpec> grpc_directives();     // directives_grpc.cc
std::span<const DirectiveSpec> memcached_directives();  // directives_memcached.cc
std::span<const DirectiveSpec> identity_directives();  // directives_identity.cc: realip, geo
std::span<const DirectiveSpec> geoip_directives();  // directives_geoip.cc: geoip_country, geoip_city...
std::span<const DirectiveSpec> geoip2_directives();  // directives_geoip2.cc: geoip2 {}, geoip2_proxy...
std::span<const DirectiveSpec> browser_directives();  // directives_browser.cc: modern_browser, ancient_browser...
std::span<const DirectiveSpec> status_directives();    // directives_status.cc: stub_status, autoindex
std::span<const DirectiveSpec> client_cert_directives();  // directives_client_cert.cc: ssl_verify_client...
std::span<const DirectiveSpec> ssl_stapling_directives();  // directives_ssl_stapling.cc: ssl_stapling...
std::span<const DirectiveSpec> ssl_password_directives();  // directives_ssl_password.cc: ssl_password_file
std::span<const DirectiveSpec> sub_directives();  // directives_sub.cc: sub_filter*
std::span<const DirectiveSpec> ssi_directives();  // directives_ssi.cc: ssi*, add_*_body, addition_types
std::span<const DirectiveSpec> referer_directives();  // directives_referer.cc: valid_referers, referer_hash_*
std::span<const DirectiveSpec> secure_link_directives();  // directives_secure_link.cc: secure_link*
std::span<const DirectiveSpec> dav_directives();  // directives_dav.cc: dav_methods, dav_access...
std::span<const DirectiveSpec> dav_ext_directives();  // directives_dav_ext.cc: dav_ext_methods, dav_ext_lock*
std::span<const DirectiveSpec> headers_more_directives();  // directives_headers_more.cc: more_*_headers
std::span<const DirectiveSpec> image_filter_directives();  // directives_image_filter.cc: image_filter*
std::span<const DirectiveSpec> userid_directives();  // directives_userid.cc: userid*
std::span<const DirectiveSpec> small_module_directives();  // directives_small_modules.cc: split_clients, empty_gif
std::span<const DirectiveSpec> pseudo_streaming_directives();  // directives_pseudo_streaming.cc: flv, mp4*
std::span<const DirectiveSpec> trailer_directives();  // directives_trailer.cc: add_trailer
// header_inheritance.cc: add_header_inherit, add_trailer_inherit, and the
// step that applies them once a block's plain directives are read.
std::span<const DirectiveSpec> field_inherit_directives();
void finish_field_inheritance(Scope& s);
// worker_cpu_affinity, worker_priority, worker_rlimit_core, working_directory... (directives_process.cc).
std::span<const DirectiveSpec> process_directives();
std::span<const DirectiveSpec> mirror_directives();  // directives_mirror.cc: mirror, mirror_request_body
std::span<const DirectiveSpec> upstream_file_directives();  // directives_upstream_files.cc: *_store, *_temp_path
std::span<const DirectiveSpec> upstream_socket_directives();  // directives_upstream_sockets.cc: *_socket_rcvbuf...
std::span<const DirectiveSpec> upstream_range_directives();  // directives_upstream_ranges.cc: *_force_ranges
std::span<const DirectiveSpec> cache_directives();  // directives_cache.cc: proxy_cache*, fastcgi_cache*, uwsgi_cache*
// Not yet implemented directives, loaded when set to nginx's default
// (directives_defaults.cc); searched last.
std::span<const DirectiveSpec> default_only_directives();
std::span<const DirectiveSpec> admin_directives();  // directives_admin.cc: admin_listen, api
std::span<const DirectiveSpec> symlink_directives();  // directives_symlinks.cc: disable_symlinks
std::span<const DirectiveSpec> stream_directives();  // stream/compile.cc: the stream {} block
// Defines, before anything compiles, the variables the rewrite module makes
// (`set $x`, named captures), so a template may use one written earlier in
// the file than its `set`, as in nginx (directives_rewrite.cc).
Status define_rewrite_variables(const std::vector<Node>& nodes);
// Likewise the variables of the http block's map {}, geo {} and
// split_clients {} blocks (declare_block_variables.cc).
void declare_block_variables(const std::vector<Node>& main);
// proxy_pass is not inherited by nested locations (directives_proxy.cc).
void reset_uninherited_proxy(LocationSettings& s);
// fastcgi_pass and uwsgi_pass, likewise (directives_cgi.cc).
void reset_uninherited_cgi(LocationSettings& s);
// The group a *_pass address names: an upstream {} block, or an implicit
// group of the address's servers made once per address (directives_proxy.cc).
Result<std::shared_ptr<const UpstreamGroupConfig>> upstream_for_address(Compiler& c, std::string_view host,
                                                                         const Node& n, uint16_t default_port = 80);

// One `server` line of an upstream {} (or of its state file, or the admin
// API's description of a server) appended to `g` (directives_proxy.cc).
Status upstream_server(UpstreamGroupConfig& g, const Node& n);
// Once the http block is compiled: each upstream with `server ... resolve`
// gets the http block's resolver and resolver_timeout where it has none of
// its own, and is refused without one, as nginx does (directives_proxy.cc).
Status finish_upstream_resolvers(Config& cfg, const LocationSettings& http);
// A `resolver` / `resolver_timeout` line's value, wherever it is
// (directives_resolver.cc).
Result<std::shared_ptr<const dns::ResolverConfig>> parse_resolver(const Node& n);
Result<Ms> parse_resolver_timeout(const Node& n);
// `state FILE` in an upstream {}: its server lines, when the file exists
// (directives_admin.cc).
Status read_state_file(Compiler& c, UpstreamGroupConfig& g, const Node& n);

// admin_listen: appends to the http block's directives the server that
// serves the admin API on that address; marks the config as having the API
// when any location has `api` (directives_admin.cc).
Status add_admin_server(Compiler& c, std::vector<Node>& http_children);

class Compiler {
 public:
  Compiler(Config& cfg, std::vector<std::string>& warnings) : cfg_(cfg), warnings_(warnings) {}

  // Compiles the main context (file followed by -g directives).
  Status run(const std::vector<Node>& main);

  // Checks names, contexts and arity of a whole tree, in file order.
  Status validate(const std::vector<Node>& nodes, Context ctx) const;
  // Runs the directives of one block: plain ones, then child scopes.
  Status block(const std::vector<Node>& nodes, Scope& scope);

  // Block setters.
  Status http(const Node& n);
  Status server(Scope& parent, const Node& n);
  void mark_quic_groups();
  Status location(Scope& parent, const Node& n);

  Config& cfg() { return cfg_; }
  // Relative paths resolve against the prefix, as nginx does.
  std::string full_path(std::string_view p) const;
  void warn(const Node& n, const std::string& message);

  const std::shared_ptr<const MimeTypes>& default_types();

 private:
  Status build_listen_groups();

  Config& cfg_;
  std::vector<std::string>& warnings_;
  std::shared_ptr<const MimeTypes> default_types_;
  // Where each server's listens were written, for duplicate-default errors.
  std::unordered_map<const Server*, std::vector<const Node*>> listen_nodes_;
  std::vector<std::shared_ptr<Server>> servers_;
  // The http block's directives with what admin_listen adds: kept for the
  // compiler's life, as listen_nodes_ points into them.
  std::vector<Node> http_children_;
};

// geoip_country|geoip_org|geoip_city FILE [utf8], in http or stream: the
// database opened, or nginx's error (directives_geoip.cc).
Result<std::shared_ptr<const geoip::Database>> open_geoip_database(const Node& n);

// Value parsers, shared by setters and tests.
// A server_name (or valid_referers host) that is not a regex, lower-cased
// and sorted into exact, "*.x"/".x" and "x.*"; the caller judges what
// is left (a '*' elsewhere is invalid).
void classify_server_name(std::string name, ServerName& sn);

bool parse_number(std::string_view s, uint64_t& out);
// The LEVEL arguments after a *_temp_path's PATH (at most three, ten digits
// in all), or nginx's error.
Status parse_temp_levels(const Node& n, std::array<uint8_t, 3>& out);
bool parse_size(std::string_view s, int64_t& out);    // "10", "1k", "8M", "1g"
bool parse_time_ms(std::string_view s, int64_t& out);  // "90" (s), "500ms", "1h30m", "1y"

// One of an access_log's buffer=SIZE, flush=TIME, gzip[=LEVEL] arguments
// into `b`, with nginx's words for a bad value; nullopt when `arg` is none
// of them. finish_log_buffering then applies nginx's rules on the whole:
// gzip without buffer= takes 64k, flush= needs a buffer, syslog is never
// buffered.
std::optional<Status> parse_log_buffering(const Node& n, std::string_view arg, LogBuffering& b);
Status finish_log_buffering(const Node& n, LogBuffering& b, bool syslog);

// "FILE:LINE: " + message.
Error node_error(const Node& n, const std::string& message);
// nginx's "invalid value "V" in "name" directive".
Error invalid_value(const Node& n, std::string_view value);
// `text` as allow/deny read it: "all", "unix:", an address or a CIDR
// (warns, as nginx, when bits below the mask are set).
Result<AccessRule> parse_access_rule(Compiler& c, const Node& n, const std::string& text, bool allow);

}  // namespace torii::config
