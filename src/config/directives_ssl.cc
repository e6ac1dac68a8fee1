// The ssl module's directives. They only record settings: the TLS context
// is built from them once the whole config is read (build_ssl_contexts), so
// a bad certificate fails the load with its file named.
#include <memory>

#include "config/directives.h"
#include "core/quote.h"
#include "config/ssl_config.h"
#include "config/ssl_directive_args.h"

namespace torii::config {

namespace {

// Array directives replace what the parent block set at their first use in
// a block (nginx's merge of arrays).
template <typename T>
void own(std::vector<T>& list, const void*& owner, const Scope& s) {
  if (owner == s.server) return;
  list.clear();
  owner = s.server;
}

Status set_ssl(Compiler& c, Scope& s, const Node& n) {
  c.warn(n, "the \"ssl\" directive is deprecated, use the \"listen ... ssl\" directive instead");
  writable_ssl(s, n).ssl_on = n.args[0] == "on";
  return Ok{};
}

// ssl_certificate and ssl_certificate_key: a file, "data:PEM", or a name
// with $ssl_server_name, the one variable a handshake knows here.
Result<SslFile> certificate_arg(Compiler& c, const Node& n) {
  const std::string& p = n.args[0];
  if (p.rfind("engine:", 0) == 0) return node_error(n, q(p) + " is not yet supported in " + q(n.name) + " directive");
  for (size_t at = p.find('$'); at != std::string::npos; at = p.find('$', at + 1)) {
    std::string_view rest = std::string_view(p).substr(at);
    if (rest.rfind("$ssl_server_name", 0) != 0 && rest.rfind("${ssl_server_name}", 0) != 0)
      return node_error(n, "only $ssl_server_name is supported as a variable in " + q(n.name) + " directive");
  }
  if (p.rfind("data:", 0) == 0) return SslFile{p, n.where()};
  if (p.find('$') == std::string::npos) return tls_file_arg(c, n);
  // With a variable: relative names are completed now, or once rendered when the variable comes first.
  if (p[0] == '/' || p[0] == '$') return SslFile{p, n.where()};
  return SslFile{tls_conf_dir(c) + p, n.where()};
}

Status set_certificate(Compiler& c, Scope& s, const Node& n) {
  auto f = certificate_arg(c, n);
  if (!f) return Error{f.error()};
  auto& ssl = writable_ssl(s, n);
  ssl.conf_dir = tls_conf_dir(c);
  own(ssl.certificates, ssl.certificates_owner, s);
  ssl.certificates.push_back(std::move(*f));
  return Ok{};
}

Status set_certificate_key(Compiler& c, Scope& s, const Node& n) {
  auto f = certificate_arg(c, n);
  if (!f) return Error{f.error()};
  auto& ssl = writable_ssl(s, n);
  own(ssl.certificate_keys, ssl.keys_owner, s);
  ssl.certificate_keys.push_back(std::move(*f));
  return Ok{};
}

Status set_protocols(Compiler& c, Scope& s, const Node& n) {
  auto bits = tls_protocols_arg(c, n);
  if (!bits) return Error{bits.error()};
  writable_ssl(s, n).protocols = *bits;
  return Ok{};
}

Status set_ciphers(Compiler&, Scope& s, const Node& n) {
  writable_ssl(s, n).ciphers = n.args[0];
  return Ok{};
}

Status set_prefer_server_ciphers(Compiler&, Scope& s, const Node& n) {
  writable_ssl(s, n).prefer_server_ciphers = n.args[0] == "on";
  return Ok{};
}

Status set_ecdh_curve(Compiler&, Scope& s, const Node& n) {
  writable_ssl(s, n).ecdh_curve = n.args[0];
  return Ok{};
}

// off | none | builtin[:size] | shared:name:size, the last two combinable.
Status set_session_cache(Compiler&, Scope& s, const Node& n) {
  auto& ssl = writable_ssl(s, n);
  using SC = SslServerConfig::SessionCache;
  for (const auto& a : n.args) {
    std::string_view v = a;
    if (v == "off" || v == "none") {
      if (n.args.size() != 1) return invalid_value(n, a);
      ssl.session_cache = v == "off" ? SC::off : SC::none;
      continue;
    }
    if (v == "builtin" || v.rfind("builtin:", 0) == 0) {
      uint64_t sessions = 0;
      if (v.size() > 7 && !parse_number(v.substr(8), sessions)) return invalid_value(n, a);
      if (ssl.session_cache != SC::shared) {
        ssl.session_cache = SC::builtin;
        ssl.session_cache_size = int64_t(sessions);
      }
      continue;
    }
    if (v.rfind("shared:", 0) == 0) {
      v.remove_prefix(7);
      size_t colon = v.find(':');
      if (colon == std::string_view::npos || colon == 0) return invalid_value(n, a);
      int64_t bytes = 0;
      if (!parse_size(v.substr(colon + 1), bytes) || bytes < 8 * 4096) {
        if (bytes > 0) return node_error(n, "session cache " + q(a) + " is too small");
        return invalid_value(n, a);
      }
      // One context per server, shared by every worker thread: its cache
      // is shared already. The size bounds it at about 4000 sessions per
      // megabyte, as nginx's shared zone does.
      ssl.session_cache = SC::shared;
      ssl.session_cache_name = std::string(v.substr(0, colon));
      ssl.session_cache_size = bytes / 256;
      continue;
    }
    return invalid_value(n, a);
  }
  return Ok{};
}

Status set_session_timeout(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  writable_ssl(s, n).session_timeout_s = ms / 1000;
  return Ok{};
}

Status set_session_tickets(Compiler&, Scope& s, const Node& n) {
  writable_ssl(s, n).session_tickets = n.args[0] == "on";
  return Ok{};
}

Status set_ticket_key(Compiler& c, Scope& s, const Node& n) {
  auto f = tls_file_arg(c, n);
  if (!f) return Error{f.error()};
  auto& ssl = writable_ssl(s, n);
  own(ssl.ticket_key_files, ssl.ticket_keys_owner, s);
  ssl.ticket_key_files.push_back(std::move(*f));
  return Ok{};
}

Status set_early_data(Compiler&, Scope& s, const Node& n) {
  writable_ssl(s, n).early_data = n.args[0] == "on";
  return Ok{};
}

Status set_reject_handshake(Compiler&, Scope& s, const Node& n) {
  writable_ssl(s, n).reject_handshake = n.args[0] == "on";
  return Ok{};
}

Status set_dhparam(Compiler& c, Scope& s, const Node& n) {
  auto f = tls_file_arg(c, n);
  if (!f) return Error{f.error()};
  writable_ssl(s, n).dhparam = std::move(*f);
  return Ok{};
}

Status set_conf_command(Compiler&, Scope& s, const Node& n) {
  auto& ssl = writable_ssl(s, n);
  own(ssl.conf_commands, ssl.conf_commands_owner, s);
  ssl.conf_commands.emplace_back(n.args[0], n.args[1]);
  return Ok{};
}

Status set_buffer_size(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v) || v <= 0) return invalid_value(n, n.args[0]);
  writable_ssl(s, n).buffer_size = size_t(std::min<int64_t>(v, 16 * 1024));  // a TLS record holds 16 KB at most
  return Ok{};
}

constexpr uint16_t kHS = kHttp | kServer;
constexpr Context kNone = kMain;

const DirectiveSpec kSsl[] = {
    {"ssl", kHS, kFlag, true, false, kNone, &set_ssl},
    {"ssl_certificate", kHS, kArgs1, false, false, kNone, &set_certificate},
    {"ssl_certificate_key", kHS, kArgs1, false, false, kNone, &set_certificate_key},
    {"ssl_protocols", kHS, kArgs1More, true, false, kNone, &set_protocols},
    {"ssl_ciphers", kHS, kArgs1, true, false, kNone, &set_ciphers},
    {"ssl_prefer_server_ciphers", kHS, kFlag, true, false, kNone, &set_prefer_server_ciphers},
    {"ssl_ecdh_curve", kHS, kArgs1, true, false, kNone, &set_ecdh_curve},
    {"ssl_session_cache", kHS, kArgs1 | kArgs2, true, false, kNone, &set_session_cache},
    {"ssl_session_timeout", kHS, kArgs1, true, false, kNone, &set_session_timeout},
    {"ssl_session_tickets", kHS, kFlag, true, false, kNone, &set_session_tickets},
    {"ssl_session_ticket_key", kHS, kArgs1, false, false, kNone, &set_ticket_key},
    {"ssl_early_data", kHS, kFlag, true, false, kNone, &set_early_data},
    {"ssl_reject_handshake", kHS, kFlag, true, false, kNone, &set_reject_handshake},
    {"ssl_dhparam", kHS, kArgs1, true, false, kNone, &set_dhparam},
    {"ssl_conf_command", kHS, kArgs2, false, false, kNone, &set_conf_command},
    {"ssl_buffer_size", kHS, kArgs1, true, false, kNone, &set_buffer_size},
};

}  // namespace

std::span<const DirectiveSpec> ssl_directives() { return kSsl; }

}  // namespace torii::config
