#include "stream/variables.h"

#include <time.h>
#include <unistd.h>

#include <cstring>

#include "config/geoip_config.h"
#include "http/date.h"
#include "config/geo_config.h"
#include "modules/client_cert/client_cert.h"
#include "modules/geo/geo_variable.h"
#include "modules/split_clients/split_clients.h"
#include "net/ip_address.h"
#include "modules/geoip/fields.h"
#include "net/address.h"
#include "stream/limit_conn/limit_conn.h"

namespace torii::stream {

namespace {

struct Named {
  std::string_view name;
  Var var;
};

constexpr Named kVariables[] = {
    {"remote_addr", Var::remote_addr},
    {"remote_port", Var::remote_port},
    {"realip_remote_addr", Var::realip_remote_addr},
    {"realip_remote_port", Var::realip_remote_port},
    {"binary_remote_addr", Var::binary_remote_addr},
    {"server_addr", Var::server_addr},
    {"server_port", Var::server_port},
    {"protocol", Var::protocol},
    {"status", Var::status},
    {"bytes_sent", Var::bytes_sent},
    {"bytes_received", Var::bytes_received},
    {"session_time", Var::session_time},
    {"upstream_addr", Var::upstream_addr},
    {"upstream_bytes_sent", Var::upstream_bytes_sent},
    {"upstream_bytes_received", Var::upstream_bytes_received},
    {"upstream_connect_time", Var::upstream_connect_time},
    {"upstream_first_byte_time", Var::upstream_first_byte_time},
    {"upstream_session_time", Var::upstream_session_time},
    {"time_local", Var::time_local},
    {"time_iso8601", Var::time_iso8601},
    {"connection", Var::connection},
    {"hostname", Var::hostname},
    {"msec", Var::msec},
    {"pid", Var::pid},
    {"nginx_version", Var::nginx_version},
    {"limit_conn_status", Var::limit_conn_status},
    {"proxy_protocol_addr", Var::proxy_protocol_addr},
    {"proxy_protocol_port", Var::proxy_protocol_port},
    {"proxy_protocol_server_addr", Var::proxy_protocol_server_addr},
    {"proxy_protocol_server_port", Var::proxy_protocol_server_port},
    {"ssl_preread_server_name", Var::ssl_preread_server_name},
    {"ssl_preread_protocol", Var::ssl_preread_protocol},
    {"ssl_preread_alpn_protocols", Var::ssl_preread_alpn_protocols},
    {"ssl_protocol", Var::ssl_protocol},
    {"ssl_cipher", Var::ssl_cipher},
    {"ssl_server_name", Var::ssl_server_name},
    {"ssl_session_reused", Var::ssl_session_reused},
    {"ssl_alpn_protocol", Var::ssl_alpn_protocol},
    {"ssl_session_id", Var::ssl_session_id},
    {"ssl_curve", Var::ssl_curve},
    {"ssl_curves", Var::ssl_curves},
    {"ssl_ciphers", Var::ssl_ciphers},
    {"ssl_client_verify", Var::ssl_client_verify},
    {"ssl_client_s_dn", Var::ssl_client_s_dn},
    {"ssl_client_i_dn", Var::ssl_client_i_dn},
    {"ssl_client_s_dn_legacy", Var::ssl_client_s_dn_legacy},
    {"ssl_client_i_dn_legacy", Var::ssl_client_i_dn_legacy},
    {"ssl_client_raw_cert", Var::ssl_client_raw_cert},
    {"ssl_client_cert", Var::ssl_client_cert},
    {"ssl_client_escaped_cert", Var::ssl_client_escaped_cert},
    {"ssl_client_fingerprint", Var::ssl_client_fingerprint},
    {"ssl_client_serial", Var::ssl_client_serial},
    {"ssl_client_v_start", Var::ssl_client_v_start},
    {"ssl_client_v_end", Var::ssl_client_v_end},
    {"ssl_client_v_remain", Var::ssl_client_v_remain},
};

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void append_seconds_ms(std::string& out, int64_t ms) {
  if (ms < 0) ms = 0;
  char buf[32];
  snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ms / 1000), static_cast<long long>(ms % 1000));
  out.append(buf);
}

const std::string& hostname() {
  static const std::string name = [] {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return std::string();
    return std::string(buf);
  }();
  return name;
}

template <typename T, typename F>
bool join(const std::vector<T>& items, std::string& out, F each) {
  if (items.empty()) return false;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out.append(", ");
    each(items[i]);
  }
  return true;
}

}  // namespace

namespace {

// A name's place in one of the lists, made at the end when new.
uint32_t define_in(std::vector<std::string>& list, std::string_view name) {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i] == name) return uint32_t(i);
  list.emplace_back(name);
  return uint32_t(list.size() - 1);
}

bool find_in(const std::vector<std::string>& list, std::string_view name, uint32_t& index) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == name) {
      index = uint32_t(i);
      return true;
    }
  }
  return false;
}

}  // namespace

uint32_t VariableNames::define(std::string_view name) { return define_in(names_, name); }
bool VariableNames::find(std::string_view name, uint32_t& slot) const { return find_in(names_, name, slot); }
uint32_t VariableNames::define_map(std::string_view name) { return define_in(maps_, name); }
bool VariableNames::find_map(std::string_view name, uint32_t& index) const { return find_in(maps_, name, index); }
uint32_t VariableNames::define_split(std::string_view name) { return define_in(splits_, name); }
bool VariableNames::find_split(std::string_view name, uint32_t& index) const { return find_in(splits_, name, index); }
uint32_t VariableNames::define_geo(std::string_view name) { return define_in(geos_, name); }
bool VariableNames::find_geo(std::string_view name, uint32_t& index) const { return find_in(geos_, name, index); }
uint32_t VariableNames::define_geoip2(std::string_view name) { return define_in(geoip2_, name); }
bool VariableNames::find_geoip2(std::string_view name, uint32_t& index) const {
  return find_in(geoip2_, name, index);
}

bool is_builtin_variable(std::string_view name) {
  if (geoip::Field f; geoip::find_field(name, f)) return true;
  for (const auto& v : kVariables)
    if (v.name == name) return true;
  return false;
}


Result<Template> compile_template(std::string_view text, const VariableNames& names, const NamedGroups* groups) {
  Template t;
  t.source = std::string(text);
  std::string literal;
  auto flush = [&] {
    if (literal.empty()) return;
    TemplatePart p;
    p.literal = std::move(literal);
    t.parts.push_back(std::move(p));
    literal.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$') {
      literal.push_back(text[i++]);
      continue;
    }
    ++i;
    std::string_view name;
    if (i < text.size() && text[i] == '{') {
      const size_t close = text.find('}', i);
      if (close == std::string_view::npos) return make_error("the closing bracket in \"" + std::string(text) + "\" variable is missing");
      name = text.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      const size_t start = i;
      while (i < text.size() && name_char(text[i])) ++i;
      name = text.substr(start, i - start);
    }
    if (name.empty()) return make_error("invalid variable name in \"" + std::string(text) + "\"");
    TemplatePart p;
    p.is_variable = true;
    bool known = false;
    for (const auto& v : kVariables) {
      if (v.name == name) {
        p.var = v.var;
        known = true;
      }
    }
    if (!known && names.find_geo(name, p.index)) {
      p.var = Var::geo_;
      known = true;
    }
    if (!known && names.find_split(name, p.index)) {
      p.var = Var::split_;
      known = true;
    }
    if (!known && names.find_geoip2(name, p.index)) {
      p.var = Var::geoip2_;
      known = true;
    }
    if (geoip::Field f; !known && geoip::find_field(name, f)) {
      p.var = Var::geoip_;
      p.index = static_cast<uint32_t>(f);
      known = true;
    }
    if (!known && names.find_map(name, p.index)) {
      p.var = Var::map_;
      known = true;
    }
    if (known && (p.var == Var::map_ || p.var == Var::geo_ || p.var == Var::split_ || p.var == Var::geoip2_)) {
      uint32_t slot = 0;
      if (names.find(name, slot)) p.set_slot = slot;
    }
    if (!known && names.find(name, p.index)) {
      p.var = Var::user_;
      known = true;
    }
    if (!known && name.size() == 1 && name[0] >= '1' && name[0] <= '9') {
      p.var = Var::capture_;
      p.index = uint32_t(name[0] - '0');
      known = true;
    }
    for (size_t g = 0; !known && groups && g < groups->size(); ++g) {
      if ((*groups)[g].first == name) {
        p.var = Var::capture_;
        p.index = uint32_t((*groups)[g].second);
        known = true;
      }
    }
    if (!known) return make_error("unknown \"" + std::string(name) + "\" variable");
    flush();
    t.parts.push_back(std::move(p));
  }
  flush();
  return t;
}

namespace {

// The groups of the map regex whose value is being rendered ($1, $name).
thread_local const config::Captures* t_captures = nullptr;

// A map variable: the source rendered, looked up in nginx's order, the
// value rendered (a regex's groups readable in it). A map whose value
// reads itself stops at a depth.
bool render_map(uint32_t index, const Facts& f, std::string& out) {
  thread_local int depth = 0;
  if (!f.maps || index >= f.maps->size() || depth > 8) return false;
  const Map& m = *(*f.maps)[index];
  ++depth;
  std::string key;
  render(m.source, f, key);
  config::Captures captures;
  const Template& value = config::map_lookup(m, key, &captures, nullptr);
  const config::Captures* outer = t_captures;
  t_captures = &captures;
  render(value, f, out);
  t_captures = outer;
  --depth;
  return true;
}

// The client's address in the stream block's database for the field.
bool render_geoip(uint32_t field, const Facts& f, std::string& out) {
  if (!f.geoip) return false;
  const auto g = static_cast<geoip::Field>(field);
  const geoip::Database* db = f.geoip->database_for(g);
  return db && db->append(g, net::ip_of(f.peer), out);
}

// A geoip2 {} variable: source='s value when it is an address, else the
// client's (the stream module trusts no proxies).
bool render_geoip2(uint32_t index, const Facts& f, std::string& out) {
  if (!f.geoip2 || index >= f.geoip2->size()) return false;
  const Geoip2& v = *(*f.geoip2)[index];
  if (v.lookup.is_metadata) return geoip2::append_metadata(v.lookup, out);
  net::IpAddress ip;
  if (v.source) {
    std::string text;
    render(*v.source, f, text);
    if (!net::parse_ip(text, ip)) ip = {};
  } else {
    ip = net::ip_of(f.peer);
  }
  return geoip2::append_record(v.lookup, ip, out);
}

bool append_if(bool present, std::string_view value, std::string& out) {
  if (present) out.append(value);
  return present;
}

}  // namespace

bool render_variable(const TemplatePart& p, const Facts& f, std::string& out) {
  if (p.set_slot != kNoSetSlot && p.set_slot < f.user_set.size() && f.user_set[p.set_slot]) {
    out.append(f.user[p.set_slot]);
    return true;
  }
  switch (p.var) {
    case Var::remote_addr:
      out.append(net::address_text(f.peer));
      return true;
    case Var::remote_port:
      if (net::address_port(f.peer)) out.append(std::to_string(net::address_port(f.peer)));  // none on a unix socket
      return true;
    case Var::realip_remote_addr:
      out.append(net::address_text(f.realip_peer.ss_family ? f.realip_peer : f.peer));
      return true;
    case Var::realip_remote_port: {
      const sockaddr_storage& p = f.realip_peer.ss_family ? f.realip_peer : f.peer;
      if (net::address_port(p)) out.append(std::to_string(net::address_port(p)));
      return true;
    }
    case Var::binary_remote_addr:
      if (f.peer.ss_family == AF_UNIX) {
        out.append(net::address_text(f.peer));  // "unix:", as nginx
      } else if (f.peer.ss_family == AF_INET6) {
        out.append(reinterpret_cast<const char*>(&reinterpret_cast<const sockaddr_in6&>(f.peer).sin6_addr), 16);
      } else {
        out.append(reinterpret_cast<const char*>(&reinterpret_cast<const sockaddr_in&>(f.peer).sin_addr), 4);
      }
      return true;
    case Var::server_addr:
      out.append(net::address_text(f.local));
      return true;
    case Var::server_port:
      if (net::address_port(f.local)) out.append(std::to_string(net::address_port(f.local)));
      return true;
    case Var::protocol:
      out.append(f.udp ? "UDP" : "TCP");
      return true;
    case Var::status:
      out.append(std::to_string(f.status));
      return true;
    case Var::bytes_sent:
      out.append(std::to_string(f.bytes_sent));
      return true;
    case Var::bytes_received:
      out.append(std::to_string(f.bytes_received));
      return true;
    case Var::session_time:
      append_seconds_ms(out, f.now_ms - f.start_ms);
      return true;
    case Var::upstream_addr:
      return join(f.upstream_addr, out, [&](const std::string& a) { out.append(a); });
    case Var::upstream_bytes_sent:
      return join(f.upstream_bytes_sent, out, [&](uint64_t v) { out.append(std::to_string(v)); });
    case Var::upstream_bytes_received:
      return join(f.upstream_bytes_received, out, [&](uint64_t v) { out.append(std::to_string(v)); });
    case Var::upstream_connect_time:
    case Var::upstream_first_byte_time:
    case Var::upstream_session_time: {
      const auto& times = p.var == Var::upstream_connect_time      ? f.upstream_connect_ms
                          : p.var == Var::upstream_first_byte_time ? f.upstream_first_byte_ms
                                                                   : f.upstream_session_ms;
      return join(times, out, [&](int64_t ms) {
        if (ms < 0) {
          out.push_back('-');
        } else {
          append_seconds_ms(out, ms);
        }
      });
    }
    case Var::time_local:
      out.append(http::cached_time_local(::time(nullptr)));
      return true;
    case Var::time_iso8601:
      out.append(http::cached_time_iso8601(::time(nullptr)));
      return true;
    case Var::connection:
      out.append(std::to_string(f.connection));
      return true;
    case Var::hostname:
      out.append(hostname());
      return true;
    case Var::msec: {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      append_seconds_ms(out, int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000);
      return true;
    }
    case Var::pid:
      out.append(std::to_string(getpid()));
      return true;
    case Var::nginx_version:
      out.append(TORII_VERSION);
      return true;
    case Var::limit_conn_status:
      return append_limit_conn_status(f.limit_conn_status, out);
    case Var::proxy_protocol_addr:
      if (!f.has_proxy_protocol) return false;
      out.append(f.pp_src_addr);
      return true;
    case Var::proxy_protocol_port:
      if (!f.has_proxy_protocol) return false;
      out.append(std::to_string(f.pp_src_port));
      return true;
    case Var::proxy_protocol_server_addr:
      if (!f.has_proxy_protocol) return false;
      out.append(f.pp_dst_addr);
      return true;
    case Var::proxy_protocol_server_port:
      if (!f.has_proxy_protocol) return false;
      out.append(std::to_string(f.pp_dst_port));
      return true;
    case Var::ssl_preread_server_name:
      return append_if(f.has_preread, f.preread_server_name, out);
    case Var::ssl_preread_protocol:
      return append_if(f.has_preread, f.preread_protocol, out);
    case Var::ssl_preread_alpn_protocols:
      return append_if(f.has_preread, f.preread_alpn, out);
    case Var::ssl_protocol:
      return append_if(f.tls, f.ssl_protocol, out);
    case Var::ssl_cipher:
      return append_if(f.tls, f.ssl_cipher, out);
    case Var::ssl_server_name:
      // nginx: not found without SNI.
      return append_if(f.tls && !f.ssl_server_name.empty(), f.ssl_server_name, out);
    case Var::ssl_session_reused:
      return append_if(f.tls, f.ssl_session_reused ? "r" : ".", out);
    case Var::ssl_alpn_protocol:
      return append_if(f.tls, f.ssl_alpn_protocol, out);
    case Var::ssl_session_id:
      return append_if(f.tls && !f.ssl_session_id.empty(), f.ssl_session_id, out);
    case Var::ssl_curve:
      return append_if(f.tls && !f.ssl_curve.empty(), f.ssl_curve, out);
    case Var::ssl_curves:
      return append_if(f.tls && !f.ssl_curves.empty(), f.ssl_curves, out);
    case Var::ssl_ciphers:
      return append_if(f.tls && !f.ssl_ciphers.empty(), f.ssl_ciphers, out);
    case Var::ssl_client_verify:
    case Var::ssl_client_s_dn:
    case Var::ssl_client_i_dn:
    case Var::ssl_client_s_dn_legacy:
    case Var::ssl_client_i_dn_legacy:
    case Var::ssl_client_raw_cert:
    case Var::ssl_client_cert:
    case Var::ssl_client_escaped_cert:
    case Var::ssl_client_fingerprint:
    case Var::ssl_client_serial:
    case Var::ssl_client_v_start:
    case Var::ssl_client_v_end:
    case Var::ssl_client_v_remain: {
      if (!f.tls) return false;
      using client_cert::CertField;
      static constexpr std::pair<Var, CertField> kFields[] = {
          {Var::ssl_client_verify, CertField::verify},
          {Var::ssl_client_s_dn, CertField::subject_dn},
          {Var::ssl_client_i_dn, CertField::issuer_dn},
          {Var::ssl_client_s_dn_legacy, CertField::subject_dn_legacy},
          {Var::ssl_client_i_dn_legacy, CertField::issuer_dn_legacy},
          {Var::ssl_client_raw_cert, CertField::raw_cert},
          {Var::ssl_client_cert, CertField::cert},
          {Var::ssl_client_escaped_cert, CertField::escaped_cert},
          {Var::ssl_client_fingerprint, CertField::fingerprint},
          {Var::ssl_client_serial, CertField::serial},
          {Var::ssl_client_v_start, CertField::v_start},
          {Var::ssl_client_v_end, CertField::v_end},
          {Var::ssl_client_v_remain, CertField::v_remain},
      };
      CertField field = CertField::verify;
      for (const auto& [var, which] : kFields) {
        if (var != p.var) continue;
        field = which;
        break;
      }
      client_cert::append_cert_field(f.client_cert.get(), field, out);
      return true;
    }
    case Var::geo_: {
      if (!f.geos || p.index >= f.geos->size()) return false;
      const Geo& g = *(*f.geos)[p.index];
      net::IpAddress ip;
      if (g.source) {
        std::string text;
        render(*g.source, f, text);
        if (!net::parse_ip(text, ip)) ip = {};
      } else {
        ip = net::ip_of(f.peer);
      }
      out.append(geo::geo_lookup(*g.table, ip));
      return true;
    }
    case Var::split_: {
      if (!f.splits || p.index >= f.splits->size()) return false;
      const SplitClients& sc = *(*f.splits)[p.index];
      std::string key;
      render(sc.key, f, key);
      if (const std::string* value = split_clients::pick_split_part(sc.parts, key)) out.append(*value);
      return true;
    }
    case Var::geoip_:
      return render_geoip(p.index, f, out);
    case Var::geoip2_:
      return render_geoip2(p.index, f, out);
    case Var::map_:
      return render_map(p.index, f, out);
    case Var::capture_: {
      if (!t_captures || p.index >= t_captures->spans.size() || t_captures->spans[p.index].first < 0) return false;
      out.append(t_captures->get(p.index));
      return true;
    }
    case Var::user_:
      if (p.index >= f.user.size()) return false;
      out.append(f.user[p.index]);
      return true;
  }
  return false;
}

void render(const Template& t, const Facts& f, std::string& out) {
  for (const auto& p : t.parts) {
    if (p.is_variable) {
      render_variable(p, f, out);
    } else {
      out.append(p.literal);
    }
  }
}

}  // namespace torii::stream
