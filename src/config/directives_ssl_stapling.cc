// OCSP stapling: ssl_stapling, ssl_stapling_verify, ssl_stapling_file,
// ssl_stapling_responder (nginx's ssl module). They only record settings in
// the server's SslServerConfig; the staples are set up with the TLS context
// (net/ocsp_stapling.cc) and fetched by net/ocsp_refresher.cc.
#include <memory>
#include <string>

#include "config/directives.h"
#include "config/ssl_config.h"
#include "config/ssl_directive_args.h"

namespace torii::config {

namespace {

constexpr uint16_t kHS = kHttp | kServer;

Status set_stapling(Compiler&, Scope& s, const Node& n) {
  writable_ssl(s, n).stapling = n.args[0] == "on";
  return Ok{};
}

Status set_stapling_verify(Compiler&, Scope& s, const Node& n) {
  writable_ssl(s, n).stapling_verify = n.args[0] == "on";
  return Ok{};
}

Status set_stapling_file(Compiler& c, Scope& s, const Node& n) {
  auto f = tls_file_arg(c, n);
  if (!f) return Error{f.error()};
  writable_ssl(s, n).stapling_file = std::move(*f);
  return Ok{};
}

// The URL is checked when the staples are set up, as nginx does: a bad one
// turns stapling off for the certificate with a warning.
Status set_stapling_responder(Compiler&, Scope& s, const Node& n) {
  writable_ssl(s, n).stapling_responder = n.args[0];
  return Ok{};
}

constexpr DirectiveSpec kStaplingDirectives[] = {
    {"ssl_stapling", kHS, kFlag, true, false, kMain, &set_stapling},
    {"ssl_stapling_verify", kHS, kFlag, true, false, kMain, &set_stapling_verify},
    {"ssl_stapling_file", kHS, kArgs1, true, false, kMain, &set_stapling_file},
    {"ssl_stapling_responder", kHS, kArgs1, true, false, kMain, &set_stapling_responder},
};

}  // namespace

std::span<const DirectiveSpec> ssl_stapling_directives() { return kStaplingDirectives; }

}  // namespace torii::config
