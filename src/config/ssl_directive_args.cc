#include "config/ssl_directive_args.h"

#include <memory>
#include <string_view>

namespace torii::config {

namespace {

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

SslServerConfig& writable_ssl(Scope& s, const Node& n) {
  auto next = s.server->ssl ? std::make_shared<SslServerConfig>(*s.server->ssl) : std::make_shared<SslServerConfig>();
  next->ctx.reset();
  if (next->where.empty()) next->where = n.where();
  SslServerConfig& ref = *next;
  s.server->ssl = std::move(next);
  return ref;
}

Result<SslFile> tls_file_arg(Compiler& c, const Node& n) {
  const std::string& p = n.args[0];
  if (p.find('$') != std::string::npos) return node_error(n, "variables in " + quoted(n.name) + " are not supported");
  if (p.rfind("data:", 0) == 0 || p.rfind("engine:", 0) == 0)
    return node_error(n, quoted(p) + " is not yet supported in " + quoted(n.name) + " directive");
  if (p.empty() || p[0] == '/' || c.cfg().conf_file.rfind('/') == std::string::npos)
    return SslFile{c.full_path(p), n.where()};
  return SslFile{tls_conf_dir(c) + p, n.where()};
}

std::string tls_conf_dir(Compiler& c) {
  const std::string& conf = c.cfg().conf_file;
  size_t slash = conf.rfind('/');
  return slash == std::string::npos ? c.full_path("") : conf.substr(0, slash + 1);
}

Result<uint8_t> tls_protocols_arg(Compiler& c, const Node& n) {
  struct Named {
    std::string_view name;
    uint8_t bit;
  };
  static constexpr Named kNames[] = {{"SSLv2", kSslV2},   {"SSLv3", kSslV3},   {"TLSv1", kTlsV1},
                                     {"TLSv1.1", kTlsV11}, {"TLSv1.2", kTlsV12}, {"TLSv1.3", kTlsV13}};
  uint8_t bits = 0;
  for (const auto& a : n.args) {
    uint8_t bit = 0;
    for (const auto& k : kNames)
      if (k.name == a) bit = k.bit;
    if (!bit) return node_error(n, "invalid value " + quoted(a) + " in " + quoted(n.name) + " directive");
    // A server's ssl_protocols is judged once its context is built, with
    // its ciphers' @SECLEVEL (build_ssl_contexts); an upstream's here.
    if ((bit & (kSslV2 | kSslV3 | kTlsV1 | kTlsV11)) && n.name != "ssl_protocols") {
      c.warn(n, quoted(a) + " in " + quoted(n.name) +
                    " is refused by OpenSSL 3 at its default security level: peers that only speak it will "
                    "fail the handshake");
    }
    bits |= bit;
  }
  return bits;
}

}  // namespace torii::config
