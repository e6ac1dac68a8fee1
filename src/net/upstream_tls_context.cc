#include "net/upstream_tls_context.h"
#include "core/quote.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <string>

#include "config/upstream_tls_config.h"
#include "net/certified_key.h"
#include "net/client_cert.h"
#include "net/tls_client.h"
#include "net/tls_context.h"

namespace torii::net {

namespace {

// The verdict is read after the handshake (TlsClient::verify), as nginx
// does, so that a failure is logged with its reason and the name checked
// separately; the handshake itself never fails on the chain.
int accept_any(int, X509_STORE_CTX*) { return 1; }

}  // namespace

Result<std::shared_ptr<SSL_CTX>> build_upstream_tls_context(const config::UpstreamTlsConfig& t) {
  ERR_clear_error();
  SSL_CTX* raw = SSL_CTX_new(TLS_client_method());
  if (!raw) return make_error("SSL_CTX_new() failed: " + take_ssl_errors());
  std::shared_ptr<SSL_CTX> ctx(raw, SSL_CTX_free);
  const std::string& d = t.directive.empty() ? std::string("proxy_ssl") : t.directive;

  // No renegotiation or compression; an upstream that closes without
  // close_notify ends a response read to the close, as nginx accepts.
  SSL_CTX_set_options(raw, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF);
  // A write retried after WANT_WRITE may come from another buffer (the
  // session's output string grows); idle pooled connections keep no buffers.
  SSL_CTX_set_mode(raw, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);

  auto st = set_tls_protocols(raw, t.protocols, d + "_protocols");
  if (!st) return Error{st.error()};
  if (SSL_CTX_set_cipher_list(raw, t.ciphers.c_str()) != 1)
    return make_error("SSL_CTX_set_cipher_list(" + q(t.ciphers) + ") failed: " + take_ssl_errors());

  if (!t.certificate.path.empty()) {
    if (t.certificate_key.path.empty())
      return make_error(t.certificate.where + "no " + q(d + "_certificate_key") + " is defined for certificate " +
                        q(t.certificate.path));
    // The server side's loader: the same forms and proxy_ssl_password_file.
    auto pair = load_certified_key(t.certificate.path, t.certificate_key.path, t.passwords.get());
    if (!pair) {
      const bool key = pair.error().find("certificate key") != std::string::npos;
      return make_error((key ? t.certificate_key : t.certificate).where + pair.error());
    }
    ERR_clear_error();
    if (SSL_CTX_use_cert_and_key(raw, (*pair)->cert, (*pair)->key, (*pair)->chain, 1) != 1)
      return make_error(t.certificate.where + "cannot load certificate " + q(t.certificate.path) + ": " +
                        take_ssl_errors());
    if (SSL_CTX_check_private_key(raw) != 1)
      return make_error(t.certificate_key.where + "certificate key " + q(t.certificate_key.path) +
                        " does not match certificate " + q(t.certificate.path));
  }

  if (t.verify) {
    if (t.trusted_certificate.path.empty())
      return make_error("no " + d + "_trusted_certificate for " + d + "_verify");
    if (SSL_CTX_load_verify_locations(raw, t.trusted_certificate.path.c_str(), nullptr) != 1)
      return make_error(t.trusted_certificate.where + "SSL_CTX_load_verify_locations(" +
                        q(t.trusted_certificate.path) + ") failed: " + take_ssl_errors());
    SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, accept_any);
    SSL_CTX_set_verify_depth(raw, t.verify_depth);
    if (Status crl = load_crl(raw, t.crl); !crl) return Error{crl.error()};  // as nginx: only with verify
  }

  if (Status st = apply_conf_commands(raw, t.conf_commands, false, t.conf_commands_where); !st) return Error{st.error()};

  if (t.session_reuse) {
    // Sessions live in the worker's slots (TlsSessionSlot), not in the
    // context: OpenSSL hands each new one (a TLS 1.3 ticket arrives after
    // the handshake) to the connection's slot.
    SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(raw, TlsClient::on_new_session);
  } else {
    SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_OFF);
  }
  return ctx;
}

}  // namespace torii::net
