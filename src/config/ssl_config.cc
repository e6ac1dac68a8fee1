// Builds the TLS contexts once the servers and listen groups are compiled,
// so `torii -t` and a reload fail on a bad certificate before anything runs.
#include "config/ssl_config.h"

#include <openssl/ssl.h>

#include <unordered_map>

#include "config/config.h"
#include "net/quic_tls.h"
#include "net/tls_context.h"

namespace torii::config {

bool certificates_have_variables(const SslServerConfig& s) {
  for (const auto* list : {&s.certificates, &s.certificate_keys})
    for (const auto& f : *list)
      if (f.path.find('$') != std::string::npos) return true;
  return false;
}

namespace {

bool has_certificates(const Server& s) { return s.ssl && !s.ssl->certificates.empty(); }
bool rejects_handshakes(const Server& s) { return s.ssl && s.ssl->reject_handshake; }

}  // namespace

namespace {

// OpenSSL 3 refuses SSLv3, TLSv1 and TLSv1.1 above security level 0
// (ssl_ciphers "@SECLEVEL=0:..." lowers it, as Mozilla's "old" profile does).
void warn_of_refused_protocols(const SslServerConfig& s, SSL_CTX* ctx, std::vector<std::string>& warnings) {
  if (!(s.protocols & (kSslV2 | kSslV3 | kTlsV1 | kTlsV11)) || SSL_CTX_get_security_level(ctx) == 0) return;
  warnings.push_back(s.where + "SSLv3, TLSv1 and TLSv1.1 in \"ssl_protocols\" are refused by OpenSSL 3 at security "
                     "level " + std::to_string(SSL_CTX_get_security_level(ctx)) +
                     ": peers that only speak them will fail the handshake (\"@SECLEVEL=0\" in \"ssl_ciphers\" "
                     "allows them)");
}

}  // namespace

Status build_ssl_contexts(const std::vector<std::shared_ptr<Server>>& servers, Config& cfg,
                          std::vector<std::string>& warnings) {
  bool quic = false;
  for (const auto& g : cfg.listen_groups) {
    quic = quic || g.udp;
    if (!g.listen.ssl && !g.udp) continue;
    const Server& d = *g.default_server;
    if (has_certificates(d)) continue;
    // A default server that refuses every handshake needs none, as long as
    // each server of the address has certificates or refuses too (nginx's
    // rule). QUIC's handshakes have no such refusal here: they need one.
    const bool rejects = rejects_handshakes(d) && !g.udp;
    for (const auto& srv : g.servers) {
      if (srv.get() != &d && !rejects) continue;
      if (has_certificates(*srv) || (rejects && rejects_handshakes(*srv))) continue;
      return make_error(srv->file + ":" + std::to_string(srv->line) +
                        ": no \"ssl_certificate\" is defined for the \"listen ... " +
                        (g.listen.quic ? "quic" : "ssl") + "\" directive");
    }
  }
  // Servers that inherited the same settings share one context (and cache).
  std::unordered_map<const SslServerConfig*, std::shared_ptr<const SslServerConfig>> built;
  std::vector<std::shared_ptr<const SslServerConfig>> keep;  // the keys above stay valid addresses
  for (const auto& srv : servers) {
    if (!has_certificates(*srv) && !rejects_handshakes(*srv)) continue;
    auto it = built.find(srv->ssl.get());
    if (it == built.end()) {
      auto ctx = net::build_tls_context(*srv->ssl);
      if (!ctx) return Error{ctx.error()};
      warn_of_refused_protocols(*srv->ssl, ctx->get(), warnings);
      auto with_ctx = std::make_shared<SslServerConfig>(*srv->ssl);
      with_ctx->ctx = std::move(*ctx);
      if (quic && certificates_have_variables(*srv->ssl)) {
        return make_error(srv->ssl->certificates.front().where +
                          "variables in \"ssl_certificate\" are not supported with QUIC");
      }
      if (quic && has_certificates(*srv)) {
        auto creds = net::build_quic_credentials(*srv->ssl);
        if (!creds) return Error{creds.error()};
        with_ctx->quic_credentials = std::move(*creds);
        auto ticket_key = net::build_quic_ticket_key(*srv->ssl);
        if (!ticket_key) return Error{ticket_key.error()};
        with_ctx->quic_ticket_key = std::move(*ticket_key);
      }
      it = built.emplace(srv->ssl.get(), std::move(with_ctx)).first;
    }
    keep.push_back(std::move(srv->ssl));
    srv->ssl = it->second;
  }
  return Ok{};
}

}  // namespace torii::config
