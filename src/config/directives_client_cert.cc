// Client certificates: ssl_verify_client, ssl_client_certificate,
// ssl_trusted_certificate, ssl_verify_depth, ssl_crl (nginx's ssl
// module), recorded in the server's SslServerConfig; the context is built
// from them with the rest (net/client_cert.cc).
#include <memory>
#include <string>

#include "config/directives.h"
#include "core/quote.h"
#include "config/ssl_config.h"
#include "config/ssl_directive_args.h"

namespace torii::config {

namespace {

constexpr uint16_t kHS = kHttp | kServer;

Status set_verify_client(Compiler&, Scope& s, const Node& n) {
  using V = SslServerConfig::VerifyClient;
  const std::string& v = n.args[0];
  V mode;
  if (v == "off") mode = V::off;
  else if (v == "on") mode = V::on;
  else if (v == "optional") mode = V::optional;
  else if (v == "optional_no_ca") mode = V::optional_no_ca;
  else
    return node_error(n, "invalid value " + q(v) + " in " + q(n.name) +
                             " directive, it must be \"on\", \"off\", \"optional\" or \"optional_no_ca\"");
  writable_ssl(s, n).verify_client = mode;
  return Ok{};
}

template <SslFile SslServerConfig::*F>
Status set_file(Compiler& c, Scope& s, const Node& n) {
  auto f = tls_file_arg(c, n);
  if (!f) return Error{f.error()};
  writable_ssl(s, n).*F = std::move(*f);
  return Ok{};
}

Status set_verify_depth(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > 100) return node_error(n, "invalid value " + q(n.args[0]) + " in " +
                                                                       q(n.name) + " directive");
  writable_ssl(s, n).verify_depth = static_cast<int>(v);
  return Ok{};
}

constexpr DirectiveSpec kClientCertDirectives[] = {
    {"ssl_verify_client", kHS, kArgs1, true, false, kMain, &set_verify_client},
    {"ssl_client_certificate", kHS, kArgs1, true, false, kMain, &set_file<&SslServerConfig::client_certificate>},
    {"ssl_trusted_certificate", kHS, kArgs1, true, false, kMain, &set_file<&SslServerConfig::trusted_certificate>},
    {"ssl_crl", kHS, kArgs1, true, false, kMain, &set_file<&SslServerConfig::crl>},
    {"ssl_verify_depth", kHS, kArgs1, true, false, kMain, &set_verify_depth},
};

}  // namespace

std::span<const DirectiveSpec> client_cert_directives() { return kClientCertDirectives; }

}  // namespace torii::config
