// The proxy_ssl_* settings of one block (and, later, grpc_ssl_*): how torii
// speaks TLS to an https:// upstream. Merged down http -> server ->
// location with the rest of the proxy's settings; a block that changes
// nothing shares its parent's object, so locations with the same settings
// share one client context. The context is built once the whole config is
// read (build_upstream_tls_contexts), so a bad file fails the load with
// the directive named.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/ssl_config.h"
#include "config/template.h"

namespace torii::config {

struct UpstreamTlsConfig {
  uint8_t protocols = kTlsV12 | kTlsV13;  // proxy_ssl_protocols (current nginx's default)
  std::string ciphers = "DEFAULT";        // proxy_ssl_ciphers
  bool server_name = false;               // proxy_ssl_server_name: send SNI
  Template name;                          // proxy_ssl_name; empty: $proxy_host
  bool verify = false;                    // proxy_ssl_verify
  int verify_depth = 1;                   // proxy_ssl_verify_depth
  SslFile trusted_certificate;            // proxy_ssl_trusted_certificate
  SslFile crl;                            // proxy_ssl_crl (checked with proxy_ssl_verify)
  SslFile certificate;                    // proxy_ssl_certificate (a client certificate)
  SslFile certificate_key;                // proxy_ssl_certificate_key
  std::shared_ptr<const std::vector<std::string>> passwords;  // proxy_ssl_password_file; null: none
  // proxy_ssl_conf_command NAME VALUE (a block with any replaces the
  // inherited list: `conf_commands_owner` is the block that set it).
  std::vector<std::pair<std::string, std::string>> conf_commands;
  const void* conf_commands_owner = nullptr;
  std::string conf_commands_where;  // "FILE:LINE: " of the first, for errors
  bool session_reuse = true;              // proxy_ssl_session_reuse
  std::string directive;                  // "proxy_ssl" (or "grpc_ssl"), for errors

  // Built at load; shared by every worker thread (OpenSSL contexts are
  // safe to share once set up). Null until built.
  mutable std::shared_ptr<SSL_CTX> ctx;
};

struct Server;
// Builds the client context of every block whose proxy_pass (or its
// variables' template) speaks https. Fails naming the directive and the
// file when a certificate, key or CA file is bad.
Status build_upstream_tls_contexts(const std::vector<std::shared_ptr<Server>>& servers);

}  // namespace torii::config
