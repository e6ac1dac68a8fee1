// OCSP stapling: ssl_stapling, ssl_stapling_verify, ssl_stapling_file,
// ssl_stapling_responder (nginx's ssl module). They only record settings in
// the server's SslServerConfig; the staples are set up with the TLS context
// (net/ocsp_stapling.cc) and fetched by net/ocsp_refresher.cc.
#include <memory>
#include <string>

#include "config/directives.h"
#include "config/ssl_config.h"

namespace torii::config {

namespace {

constexpr uint16_t kHS = kHttp | kServer;

std::string q(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Copy on write, as the other ssl_* directives: servers that set nothing
// keep sharing their parent's settings (and context).
SslServerConfig& writable(Scope& s, const Node& n) {
  auto next = s.server->ssl ? std::make_shared<SslServerConfig>(*s.server->ssl) : std::make_shared<SslServerConfig>();
  next->ctx.reset();
  if (next->where.empty()) next->where = n.where();
  SslServerConfig& ref = *next;
  s.server->ssl = std::move(next);
  return ref;
}

Status set_stapling(Compiler&, Scope& s, const Node& n) {
  writable(s, n).stapling = n.args[0] == "on";
  return Ok{};
}

Status set_stapling_verify(Compiler&, Scope& s, const Node& n) {
  writable(s, n).stapling_verify = n.args[0] == "on";
  return Ok{};
}

// Like nginx, the file is relative to the main config file's directory.
Status set_stapling_file(Compiler& c, Scope& s, const Node& n) {
  const std::string& p = n.args[0];
  if (p.find('$') != std::string::npos) return node_error(n, "variables in " + q(n.name) + " are not supported");
  const std::string& conf = c.cfg().conf_file;
  size_t slash = conf.rfind('/');
  std::string path = p.empty() || p[0] == '/' || slash == std::string::npos ? c.full_path(p)
                                                                             : conf.substr(0, slash + 1) + p;
  writable(s, n).stapling_file = SslFile{std::move(path), n.where()};
  return Ok{};
}

// The URL is checked when the staples are set up, as nginx does: a bad one
// turns stapling off for the certificate with a warning.
Status set_stapling_responder(Compiler&, Scope& s, const Node& n) {
  writable(s, n).stapling_responder = n.args[0];
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
