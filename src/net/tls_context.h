// Server TLS contexts (OpenSSL SSL_CTX) built from a server's ssl_*
// settings: certificates, protocols, ciphers, curves, session cache,
// tickets (with shared key files), early data, DH parameters and
// ssl_conf_command. One context per distinct settings object, shared by
// every worker thread, so its session cache is shared by all of them.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace torii::config {
struct SslServerConfig;
}

namespace torii::net {

// What a connection answers while OpenSSL reads its ClientHello. The
// connection's object is the SSL's app data (SSL_set_app_data).
class TlsHandshakeHooks {
 public:
  virtual ~TlsHandshakeHooks() = default;
  // Each ClientHello, with its server name (empty: none). May switch the
  // SSL to another server's context; false: refuse the handshake
  // (ssl_reject_handshake of the server it picks).
  virtual bool on_server_name(SSL* ssl, std::string_view name) = 0;
  // ALPN: the protocols we offer, most preferred first, in wire format.
  virtual std::string_view alpn_protocols() const = 0;
};

// Builds the context. Errors read "FILE:LINE: cannot load certificate ...".
Result<std::shared_ptr<SSL_CTX>> build_tls_context(const config::SslServerConfig& s);

// Limits the context to the protocol bits (config::SslProtocol) of
// `directive` (for the error when none is left).
Status set_tls_protocols(SSL_CTX* ctx, uint8_t bits, std::string_view directive);

// ssl_conf_command and its upstream twins: each (name, value) through
// SSL_CONF_cmd on `ctx`, as a server's or a client's context; `where`
// prefixes the error.
Status apply_conf_commands(SSL_CTX* ctx, const std::vector<std::pair<std::string, std::string>>& commands,
                           bool server, const std::string& where);

// The OpenSSL error queue as one line ("error:0A000086:...; ..."), emptied.
std::string take_ssl_errors();

}  // namespace torii::net
