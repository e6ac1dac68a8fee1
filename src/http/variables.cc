#include "http/variables.h"

#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <random>
#include <cstdio>
#include <cstring>

#include "config/map_config.h"
#include "config/proxy_config.h"
#include "core/ascii.h"
#include "core/event_loop.h"
#include "http/basic_credentials.h"
#include "handlers/fastcgi/split_path.h"
#include "handlers/request_body_buffer.h"
#include "http/document_root.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "log/error_log.h"
#include "modules/compression/compression_filter.h"
#include "modules/rewrite/runner.h"
#include "modules/limit_conn/limit_conn.h"
#include "modules/limit_rate/limit_rate.h"
#include "modules/limit_req/limit_req.h"
#include "modules/client_cert/client_cert.h"
#include "modules/geo/geo_variable.h"
#include "modules/geoip/variable.h"
#include "modules/geoip2/variable.h"
#include "modules/browser/browser.h"
#include "modules/referer/referer.h"
#include "modules/secure_link/secure_link.h"
#include "modules/ssi/date.h"
#include "net/tls_details.h"
#include "modules/userid/userid.h"
#include "modules/split_clients/split_clients.h"
#include "modules/realip/variables.h"
#include "modules/stub_status/stub_status.h"

namespace torii::http {

namespace {

using config::VarId;

void append_uint(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// "SECONDS.mmm", the way nginx prints $request_time and $msec.
void append_seconds_ms(std::string& out, int64_t ms) {
  if (ms < 0) ms = 0;
  append_int(out, ms / 1000);
  int frac = static_cast<int>(ms % 1000);
  char buf[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                 static_cast<char>('0' + frac % 10)};
  out.append(buf, sizeof buf);
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c; }

using core::iequals;

// Header names match $http_NAME the way nginx does it: case folded and '-'
// equal to '_'. Folding both sides keeps this right whichever spelling the
// config compiler stored in Variable::arg.
char fold(char c) {
  c = lower(c);
  return c == '-' ? '_' : c;
}

bool header_matches(std::string_view name, std::string_view arg) {
  if (name.size() != arg.size()) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (fold(name[i]) != fold(arg[i])) return false;
  return true;
}

// Every request header with this name, joined as nginx 1.23+ joins them:
// "; " for Cookie (its own list syntax), ", " for the rest.
bool append_request_header(const RequestHead& req, std::string_view name, std::string& out) {
  std::string_view sep = header_matches(name, "cookie") ? "; " : ", ";
  bool found = false;
  for (const Header& h : req.headers) {
    if (!header_matches(h.name, name)) continue;
    if (found) out.append(sep);
    out.append(h.value);
    found = true;
  }
  return found;
}

const Header* first_request_header(const RequestHead& req, std::string_view name) {
  for (const Header& h : req.headers)
    if (iequals(h.name, name)) return &h;
  return nullptr;
}

bool append_response_header(const ResponseHead& resp, std::string_view name, std::string& out) {
  bool found = false;
  for (const auto& [n, v] : resp.headers) {
    if (!header_matches(n, name)) continue;
    if (found) out.append(", ");
    out.append(v);
    found = true;
  }
  if (found) return true;
  // Content-Length is a field of the head, not a header, until serialised.
  if (header_matches(name, "content-length") && resp.content_length >= 0) {
    append_int(out, resp.content_length);
    return true;
  }
  return false;
}

// nginx's $arg_NAME: the first "NAME=value" pair, name compared without
// case, value raw (still percent-encoded). A bare "NAME" has no value.
bool append_arg(const RequestHead& req, std::string_view name, std::string& out) {
  std::string_view q = req.query;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (pair.size() > name.size() && pair[name.size()] == '=' &&
        iequals(pair.substr(0, name.size()), name)) {
      out.append(pair.substr(name.size() + 1));
      return true;
    }
  }
  return false;
}

// nginx's $cookie_NAME: pairs split on ';' or ',', spaces around '='
// skipped, name compared without case, first match wins.
bool append_cookie(const RequestHead& req, std::string_view name, std::string& out) {
  for (const Header& h : req.headers) {
    if (!iequals(h.name, "cookie")) continue;
    std::string_view v = h.value;
    size_t i = 0;
    while (i < v.size()) {
      while (i < v.size() && v[i] == ' ') ++i;
      size_t start = i;
      size_t end = v.find_first_of(";,", start);
      if (end == std::string_view::npos) end = v.size();
      i = end + 1;
      std::string_view item = v.substr(start, end - start);
      if (item.size() <= name.size() || !iequals(item.substr(0, name.size()), name)) continue;
      size_t p = name.size();
      while (p < item.size() && item[p] == ' ') ++p;
      if (p == item.size() || item[p] != '=') continue;
      ++p;
      while (p < item.size() && item[p] == ' ') ++p;
      // The value runs to ';' only: a ',' inside a value is kept, as nginx does.
      size_t vend = v.find(';', start + p);
      if (vend == std::string_view::npos) vend = v.size();
      out.append(v.substr(start + p, vend - start - p));
      return true;
    }
  }
  return false;
}

// The user of "Authorization: Basic base64(user:password)"; no value when
// the scheme differs, the base64 is bad, or there is no ':' or no user.
bool append_remote_user(const RequestHead& req, std::string& out) {
  BasicCredentials c;
  const bool ok = basic_credentials(req, c);
  if (ok) out.append(c.decoded, 0, c.colon);
  OPENSSL_cleanse(c.decoded.data(), c.decoded.size());
  return ok;
}

void append_protocol(int version, std::string& out) {
  switch (version) {
    case 9: break;  // HTTP/0.9 (hq-interop) names no protocol: "" as nginx's $server_protocol
    case 10: out.append("HTTP/1.0"); break;
    case 20: out.append("HTTP/2.0"); break;
    case 30: out.append("HTTP/3.0"); break;
    default: out.append("HTTP/1.1"); break;
  }
}

std::string_view request_method(const RequestHead& req) {
  return req.method_name.empty() ? method_name(req.method) : req.method_name;
}

// The first server_name as written in the config.
bool append_server_name(const Exchange& ex, std::string& out) {
  if (!ex.server || ex.server->names.empty()) return false;
  const config::ServerName& n = ex.server->names.front();
  switch (n.kind) {
    case config::ServerName::Kind::exact:
      out.append(n.name);
      break;
    case config::ServerName::Kind::wildcard_front:
      if (n.matches_bare) {  // ".example.net": nginx names it "example.net"
        out.append(std::string_view(n.name).substr(1));
        break;
      }
      out.append(n.name.starts_with('.') ? "*" : "*.");
      out.append(n.name);
      break;
    case config::ServerName::Kind::wildcard_back:
      out.append(n.name);
      out.append(n.name.ends_with('.') ? "*" : ".*");
      break;
    case config::ServerName::Kind::regex:
      if (!n.name.starts_with('~')) out.push_back('~');
      out.append(n.name);
      break;
  }
  return true;
}

const config::LocationSettings* settings_of(const Exchange& ex) {
  if (!ex.location && !ex.server) return nullptr;
  return &ex.settings();
}

bool append_root(const Exchange& ex, std::string& out) {
  if (!settings_of(ex)) return false;
  append_document_root(ex, out);
  return true;
}

bool append_realpath_root(const Exchange& ex, std::string& out) {
  if (!ex.realpath_root.empty()) {
    out.append(ex.realpath_root);
    return true;
  }
  if (!settings_of(ex)) return false;
  std::string root;
  append_document_root(ex, root);
  char resolved[PATH_MAX];
  if (!::realpath(root.c_str(), resolved)) return false;
  out.append(resolved);
  return true;
}

// The static handler stores the file it mapped to; otherwise map the URI
// the way it would.
bool append_request_filename(const Exchange& ex, std::string& out) {
  if (!ex.request_filename.empty()) {
    out.append(ex.request_filename);
    return true;
  }
  if (!settings_of(ex)) return false;
  std::string path;
  if (!map_uri_to_path(ex, ex.req.path, path)) return false;
  out.append(path);
  return true;
}

bool append_capture(const Exchange& ex, std::string_view arg, std::string& out) {
  size_t i = 0;
  auto r = std::from_chars(arg.data(), arg.data() + arg.size(), i);
  if (r.ec != std::errc() || r.ptr != arg.data() + arg.size()) return false;
  if (i >= ex.captures.spans.size()) return false;
  out.append(ex.captures.get(i));
  return true;
}

// Local time strings change once a second; format them once per second per
// thread, so a busy worker pays for localtime_r once, not per request.
struct LocalTimeCache {
  time_t sec = -1;
  char local[64];  // "28/Sep/1970:12:00:00 +0600"
  size_t local_len = 0;
  char iso[64];  // "1970-09-28T12:00:00+06:00"
  size_t iso_len = 0;
};

const LocalTimeCache& local_time(time_t now) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  thread_local LocalTimeCache c;
  if (c.sec == now) return c;
  struct tm tm;
  localtime_r(&now, &tm);
  long off = tm.tm_gmtoff / 60;
  char sign = off < 0 ? '-' : '+';
  if (off < 0) off = -off;
  int n = std::snprintf(c.local, sizeof c.local, "%02d/%s/%d:%02d:%02d:%02d %c%02ld%02ld", tm.tm_mday,
                        kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, sign,
                        off / 60, off % 60);
  c.local_len = n > 0 ? static_cast<size_t>(n) : 0;
  n = std::snprintf(c.iso, sizeof c.iso, "%4d-%02d-%02dT%02d:%02d:%02d%c%02ld:%02ld", tm.tm_year + 1900,
                    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, sign, off / 60, off % 60);
  c.iso_len = n > 0 ? static_cast<size_t>(n) : 0;
  c.sec = now;
  return c;
}

struct timespec wall_now() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts;
}

const std::string& hostname() {
  static const std::string name = [] {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return std::string();
    return std::string(buf);
  }();
  return name;
}

// $proxy_port: the port proxy_pass names, else its scheme's (the port
// is kept in $proxy_host only when it is not the default).
bool append_proxy_port(const Exchange& ex, std::string& out) {
  const config::LocationSettings* s = settings_of(ex);
  if (!s || !s->proxy || !s->proxy->proxies()) return false;
  std::string_view host = !ex.proxy_host.empty() ? std::string_view(ex.proxy_host) : std::string_view(s->proxy->proxy_host);
  const size_t colon = host.rfind(':');
  const size_t bracket = host.rfind(']');
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || bracket < colon) && colon + 1 < host.size() &&
      host.find_first_not_of("0123456789", colon + 1) == std::string_view::npos) {
    out.append(host.substr(colon + 1));
    return true;
  }
  out.append(s->proxy->ssl ? "443" : "80");
  return true;
}

// $proxy_add_x_forwarded_for: the client's X-Forwarded-For, then its address.
void append_forwarded_for(const Exchange& ex, std::string& out) {
  if (append_request_header(ex.req, "x-forwarded-for", out)) out.append(", ");
  out.append(ex.conn().remote_addr);
}

// A map {} variable: exact keys, then regexes in order, then the default.
bool append_map(const Exchange& ex, std::string_view arg, std::string& out) {
  thread_local int depth = 0;  // a map whose value names itself must not recurse forever
  size_t i = 0;
  auto r = std::from_chars(arg.data(), arg.data() + arg.size(), i);
  if (r.ec != std::errc() || !ex.config || i >= ex.config->maps.size() || depth > 8) return false;
  const config::MapConfig& m = *ex.config->maps[i];
  ++depth;
  std::string key;
  render(m.source, ex, key);
  config::Captures captures;
  const config::Regex* captured = nullptr;  // the regex that matched, when it has groups
  const config::Template* value = &config::map_lookup(m, key, &captures, &captured);
  if (captured) {
    // As nginx: named groups become variables for the rest of the request;
    // $1..$9 in the value are the map's own, swapped in while it renders.
    auto& mut = const_cast<Exchange&>(ex);
    std::swap(mut.captures, captures);
    rewrite::assign_named_captures(*captured, mut);
    render(*value, ex, out);
    std::swap(mut.captures, captures);
  } else {
    render(*value, ex, out);
  }
  --depth;
  return true;
}

// A `set` variable or named capture. Read before anything set it, it is
// empty and (uninitialized_variable_warn) says so in the error log.
bool append_user_variable(const Exchange& ex, uint32_t slot, std::string& out) {
  if (slot < ex.variables.size() && ex.variables[slot].set) {
    out.append(ex.variables[slot].value);
    return true;
  }
  if (ex.server && ex.settings().uninitialized_variable_warn && ex.config && slot < ex.config->variables.size()) {
    TORII_LOG_EX(ex, warn, "using uninitialized \"%s\" variable%s", ex.config->variables[slot].c_str(),
              log_context(ex).c_str());
  }
  return true;
}

// Every field of the upstream's response with this name, joined by ", ".
bool append_upstream_header(const Exchange& ex, std::string_view name, std::string& out) {
  bool found = false;
  for (const auto& [n, v] : ex.upstream_headers) {
    if (!header_matches(n, name)) continue;
    if (found) out.append(", ");
    out.append(v);
    found = true;
  }
  return found;
}

// nginx's $upstream_cookie_NAME: the value of the first Set-Cookie of the
// upstream's response that sets NAME (case-insensitive), up to its ';'.
bool append_upstream_cookie(const Exchange& ex, std::string_view name, std::string& out) {
  for (const auto& [n, v] : ex.upstream_headers) {
    if (!iequals(n, "set-cookie")) continue;
    // nginx's ngx_http_parse_set_cookie_lines: NAME, spaces, '=', spaces,
    // then the value up to ';'.
    std::string_view c = v;
    if (c.size() <= name.size() || !iequals(c.substr(0, name.size()), name)) continue;
    c.remove_prefix(name.size());
    while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
    if (c.empty() || c.front() != '=') continue;
    c.remove_prefix(1);
    while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
    out.append(c.substr(0, c.find(';')));
    return true;
  }
  return false;
}

// 128 random bits in hex, made once per request, as nginx's $request_id.
void append_request_id(const Exchange& ex, std::string& out) {
  if (ex.request_id.empty()) {
    thread_local std::mt19937_64 rng = [] {
      std::random_device rd;
      std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
      return std::mt19937_64(seq);
    }();
    static constexpr char kHex[] = "0123456789abcdef";
    ex.request_id.resize(32);
    for (int half = 0; half < 2; ++half) {
      uint64_t bits = rng();
      for (int i = 0; i < 16; ++i) ex.request_id[size_t(half * 16 + i)] = kHex[(bits >> (i * 4)) & 0xf];
    }
  }
  out.append(ex.request_id);
}

// The client socket's TCP_INFO field (microseconds, segments, bytes);
// not found over QUIC or a unix socket.
bool append_tcpinfo(const Exchange& ex, VarId id, std::string& out) {
  struct tcp_info ti {};
  socklen_t len = sizeof ti;
  if (ex.conn().fd < 0 || getsockopt(ex.conn().fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return false;
  uint32_t value = id == VarId::tcpinfo_rtt        ? ti.tcpi_rtt
                   : id == VarId::tcpinfo_rttvar   ? ti.tcpi_rttvar
                   : id == VarId::tcpinfo_snd_cwnd ? ti.tcpi_snd_cwnd
                                                   : ti.tcpi_rcv_space;
  append_uint(out, value);
  return true;
}

bool append_owned(const std::string& v, std::string& out) {
  if (v.empty()) return false;
  out.append(v);
  return true;
}

}  // namespace

void share_request_id(Exchange& sub, const Exchange& parent) {
  if (parent.request_id.empty()) {
    std::string scratch;
    append_request_id(parent, scratch);
  }
  sub.request_id = parent.request_id;
}

bool append_variable(const config::Variable& v, const Exchange& ex, std::string& out) {
  const RequestHead& req = ex.req;
  // A block variable that a `set` wrote in this request reads as what it wrote.
  if (v.set_slot != config::kNoSlot && v.set_slot < ex.variables.size() && ex.variables[v.set_slot].set)
    return append_user_variable(ex, v.set_slot, out);
  switch (v.id) {
    case VarId::http_:
      return append_request_header(req, v.arg, out);
    case VarId::sent_http_:
      // While the header filters run, the head they work on (nginx's
      // headers_out), so `expires $v` and add_header can read it.
      return append_response_header(ex.head_in_filters ? *ex.head_in_filters : ex.response, v.arg, out);
    case VarId::arg_:
      return append_arg(req, v.arg, out);
    case VarId::cookie_:
      return append_cookie(req, v.arg, out);
    case VarId::capture:
      return append_capture(ex, v.arg, out);
    case VarId::map_:
      return append_map(ex, v.arg, out);
    case VarId::geo_:
      return geo::append_value(ex, v.arg, out);
    case VarId::split_clients_:
      return split_clients::append_value(ex, v.arg, out);
    case VarId::geoip_:
      return geoip::append_value(ex, v.index, out);
    case VarId::geoip2_:
      return geoip2::append_value(ex, v.arg, out);
    case VarId::user_:
      return append_user_variable(ex, v.index, out);
    case VarId::upstream_http_:
      return append_upstream_header(ex, v.arg, out);
    case VarId::upstream_cookie_:
      return append_upstream_cookie(ex, v.arg, out);
    case VarId::request_id:
      append_request_id(ex, out);
      return true;
    case VarId::gzip_ratio:
      return compression::append_gzip_ratio(ex, out);
    case VarId::proxy_host: {
      if (!ex.proxy_host.empty()) return append_owned(ex.proxy_host, out);
      const config::LocationSettings* s = settings_of(ex);
      if (!s || !s->proxy || !s->proxy->upstream) return false;
      out.append(s->proxy->proxy_host);
      return true;
    }
    case VarId::proxy_port:
      return append_proxy_port(ex, out);
    case VarId::proxy_add_x_forwarded_for:
      append_forwarded_for(ex, out);
      return true;
    case VarId::upstream_addr:
      return append_owned(ex.upstream_addr, out);
    case VarId::upstream_status:
      return append_owned(ex.upstream_status, out);
    case VarId::modern_browser:
    case VarId::ancient_browser:
    case VarId::msie:
      return browser::append_variable(v.id, ex, out);
    case VarId::invalid_referer:
      if (referer::invalid(ex)) out.push_back('1');
      return true;
    case VarId::secure_link:
      return secure_link::append_secure_link(ex, out);
    case VarId::secure_link_expires:
      return secure_link::append_secure_link_expires(ex, out);
    case VarId::uid_got:
      return userid::append_uid_got(ex, out);
    case VarId::uid_set:
      return userid::append_uid_set(ex, out);
    case VarId::slice_range:
      if (ex.slice_range.empty()) return false;
      out.append(ex.slice_range);
      return true;
    case VarId::upstream_cache_status:
      if (ex.upstream_cache_status.empty()) return false;
      out.append(ex.upstream_cache_status);
      return true;
    case VarId::upstream_response_length:
      return append_owned(ex.upstream_response_length, out);
    case VarId::upstream_bytes_sent:
      return append_owned(ex.upstream_bytes_sent, out);
    case VarId::upstream_bytes_received:
      return append_owned(ex.upstream_bytes_received, out);
    case VarId::upstream_response_time:
      return append_owned(ex.upstream_response_time, out);
    case VarId::upstream_connect_time:
      return append_owned(ex.upstream_connect_time, out);
    case VarId::upstream_header_time:
      return append_owned(ex.upstream_header_time, out);

    case VarId::args:
    case VarId::query_string:
      // No '?' at all is "not found" in nginx; "/x?" is an empty value.
      if (!req.has_query) return false;
      out.append(req.query);
      return true;
    case VarId::is_args:
      // nginx tests the arguments' length, so "/x?" gives "".
      if (!req.query.empty()) out.push_back('?');
      return true;
    case VarId::uri:
    case VarId::document_uri:
      out.append(req.path);
      return true;
    case VarId::request_uri:
      out.append(req.target);
      return true;
    case VarId::request:
      out.append(request_method(req));
      out.push_back(' ');
      out.append(req.target);
      if (req.version != 9) out.push_back(' ');  // nginx's $request is the line as sent
      append_protocol(req.version, out);
      return true;
    case VarId::request_method:
      out.append(request_method(req));
      return true;
    case VarId::server_protocol:
      append_protocol(req.version, out);
      return true;
    case VarId::scheme:
    case VarId::request_scheme:
      out.append(ex.conn().tls ? "https" : "http");
      return true;
    case VarId::nginx_version:
      out.append(TORII_VERSION);
      return true;
    case VarId::fastcgi_script_name:
      handlers::fastcgi::append_script_name(ex, out);
      return true;
    case VarId::fastcgi_path_info:
      handlers::fastcgi::append_path_info(ex, out);
      return true;
    case VarId::https:
      if (ex.conn().tls) out.append("on");
      return true;
    case VarId::http3:
      if (req.version == 30) out.append("h3");
      if (req.version == 9) out.append("hq");  // HTTP/0.9 comes only over hq-interop
      return true;
    case VarId::ssl_protocol:  // not found without TLS: "-" in logs, as nginx
      return ex.conn().tls && ex.conn().tls_details && ex.conn().tls_details->append_protocol(out);
    case VarId::ssl_cipher:
      return ex.conn().tls && ex.conn().tls_details && ex.conn().tls_details->append_cipher(out);
    case VarId::ssl_server_name:
      if (!ex.conn().tls) return false;  // not found: "-" in logs, as nginx
      out.append(ex.conn().ssl_server_name);
      return true;
    case VarId::ssl_session_reused:
      if (!ex.conn().tls) return false;
      out.append(ex.conn().ssl_session_reused ? "r" : ".");
      return true;
    case VarId::ssl_session_id:
      return ex.conn().tls_details && ex.conn().tls_details->append_session_id(out);
    case VarId::ssl_curve:
      return ex.conn().tls_details && ex.conn().tls_details->append_curve(out);
    case VarId::ssl_curves:
      return ex.conn().tls_details && ex.conn().tls_details->append_curves(out);
    case VarId::ssl_ciphers:
      return ex.conn().tls_details && ex.conn().tls_details->append_ciphers(out);
    case VarId::ssl_alpn_protocol:
      return ex.conn().tls_details && ex.conn().tls_details->append_alpn(out);
    case VarId::connection_time:
      append_seconds_ms(out, ex.services().loop->now_ms() - ex.conn().start_ms);
      return true;
    case VarId::pipe:
      out.push_back(ex.pipelined ? 'p' : '.');
      return true;
    case VarId::tcpinfo_rtt:
    case VarId::tcpinfo_rttvar:
    case VarId::tcpinfo_snd_cwnd:
    case VarId::tcpinfo_rcv_space:
      return append_tcpinfo(ex, v.id, out);
    case VarId::date_gmt:
    case VarId::date_local:
      out.append(ssi::format_date(v.id == VarId::date_gmt, std::string(ssi::kDefaultTimefmt)));
      return true;
    case VarId::ssl_early_data:
      if (ex.conn().tls && ex.in_early_data()) out.append("1");
      return true;
    case VarId::host:
      if (!req.host.empty()) {
        out.append(req.host);
        return true;
      }
      append_server_name(ex, out);  // no Host (HTTP/1.0): the server's name, "" when it has none, as nginx
      return true;
    case VarId::server_name:
      append_server_name(ex, out);
      return true;  // found even when empty, like nginx's server_name ""
    case VarId::server_addr:
      out.append(ex.conn().server_addr);
      return true;
    case VarId::server_port:
      if (ex.conn().server_port) append_uint(out, ex.conn().server_port);  // a unix socket has none
      return true;
    case VarId::remote_addr:
      out.append(ex.conn().remote_addr);
      return true;
    case VarId::remote_port:
      if (ex.conn().remote_port) append_uint(out, ex.conn().remote_port);  // realip may know no port
      return true;
    case VarId::limit_req_status:
      return limits::append_limit_req_status(ex, out);
    case VarId::limit_conn_status:
      return limits::append_limit_conn_status(ex, out);
    case VarId::limit_rate:
      append_int(out, limits::effective_limit_rate(ex));
      return true;
    case VarId::remote_user:
      return append_remote_user(req, out);
    case VarId::status: {
      int s = ex.status;
      if (s < 0 || s > 999) s = 0;
      char buf[3] = {static_cast<char>('0' + s / 100), static_cast<char>('0' + s / 10 % 10),
                     static_cast<char>('0' + s % 10)};
      out.append(buf, sizeof buf);
      return true;
    }
    case VarId::body_bytes_sent:
      append_int(out, ex.body_bytes_sent > 0 ? ex.body_bytes_sent : 0);
      return true;
    case VarId::bytes_sent:
      append_int(out, ex.header_bytes + ex.body_bytes_sent);
      return true;
    case VarId::request_length:
      append_int(out, ex.request_length);
      return true;
    // As nginx: the body only while it is in memory, the file only by name.
    case VarId::request_body:
      if (!ex.request_body || ex.request_body->in_file()) return false;
      out.append(ex.request_body->memory());
      return true;
    case VarId::request_body_file:
      return ex.request_body && append_owned(ex.request_body->file_name(), out);
    case VarId::request_time: {
      auto elapsed = std::chrono::steady_clock::now() - ex.start;
      append_seconds_ms(out, std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count());
      return true;
    }
    case VarId::msec: {
      struct timespec ts = wall_now();
      append_seconds_ms(out, static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000);
      return true;
    }
    case VarId::time_local: {
      const LocalTimeCache& c = local_time(wall_now().tv_sec);
      out.append(c.local, c.local_len);
      return true;
    }
    case VarId::time_iso8601: {
      const LocalTimeCache& c = local_time(wall_now().tv_sec);
      out.append(c.iso, c.iso_len);
      return true;
    }
    case VarId::connection:
      append_uint(out, ex.conn().id);
      return true;
    case VarId::connection_requests:
      append_uint(out, ex.conn().requests);
      return true;
    case VarId::pid:
      append_int(out, getpid());
      return true;
    case VarId::hostname:
      out.append(hostname());
      return true;
    case VarId::content_length: {
      if (const Header* h = first_request_header(req, "content-length")) {
        out.append(h->value);
        return true;
      }
      // HTTP/2 and HTTP/3 may know the length without the header; a body
      // read whole has a length once read.
      if (req.content_length < 0 && ex.body_length_read < 0) return false;
      append_int(out, req.content_length >= 0 ? req.content_length : ex.body_length_read);
      return true;
    }
    case VarId::content_type: {
      const Header* h = first_request_header(req, "content-type");
      if (!h) return false;
      out.append(h->value);
      return true;
    }
    case VarId::document_root:
      return append_root(ex, out);
    case VarId::realpath_root:
      return append_realpath_root(ex, out);
    case VarId::request_filename:
      return append_request_filename(ex, out);
    case VarId::binary_remote_addr:
    case VarId::proxy_protocol_addr:
    case VarId::proxy_protocol_port:
    case VarId::proxy_protocol_server_addr:
    case VarId::proxy_protocol_server_port:
    case VarId::realip_remote_addr:
    case VarId::realip_remote_port:
      return realip::append_variable(v.id, ex, out);
    case VarId::connections_active:
    case VarId::connections_reading:
    case VarId::connections_waiting:
    case VarId::connections_writing:
      return stub_status::append_variable(v.id, out);
    case VarId::ssl_client_cert:
    case VarId::ssl_client_escaped_cert:
    case VarId::ssl_client_fingerprint:
    case VarId::ssl_client_i_dn:
    case VarId::ssl_client_s_dn_legacy:
    case VarId::ssl_client_i_dn_legacy:
    case VarId::ssl_client_raw_cert:
    case VarId::ssl_client_s_dn:
    case VarId::ssl_client_serial:
    case VarId::ssl_client_v_end:
    case VarId::ssl_client_v_remain:
    case VarId::ssl_client_v_start:
    case VarId::ssl_client_verify:
      return client_cert::append_variable(v.id, ex, out);
  }
  return false;
}

void keep_upstream_headers(Exchange& ex, const std::vector<Header>& fields) {
  ex.upstream_headers.clear();
  for (const Header& h : fields) ex.upstream_headers.emplace_back(std::string(h.name), std::string(h.value));
}

void render(const config::Template& t, const Exchange& ex, std::string& out) {
  for (const config::TemplatePart& p : t.parts) {
    if (p.is_variable)
      append_variable(p.variable, ex, out);
    else
      out.append(p.literal);
  }
}

std::string render(const config::Template& t, const Exchange& ex) {
  std::string out;
  render(t, ex, out);
  return out;
}

bool any_true(const std::vector<config::Template>& list, const Exchange& ex) {
  std::string v;
  for (const auto& t : list) {
    v.clear();
    render(t, ex, v);
    if (!v.empty() && v != "0") return true;
  }
  return false;
}

}  // namespace torii::http
