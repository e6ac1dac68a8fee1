#include "load/tls_client.h"

#include <openssl/err.h>

namespace torii::load {

namespace {

// Called for every session the server hands out (TLS 1.3: tickets after the
// handshake); the newest one is kept for the connection's next handshake.
int on_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* slot = static_cast<TlsClient::SessionSlot*>(SSL_get_app_data(ssl));
  if (!slot) return 0;
  if (slot->session) SSL_SESSION_free(slot->session);
  slot->session = session;
  return 1;  // we keep the reference
}

}  // namespace

std::string tls_error_text() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "TLS handshake failed";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

Result<std::unique_ptr<TlsClient>> TlsClient::create(Protocol protocol) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return make_error("cannot create a TLS context: " + tls_error_text());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  // A close without close_notify is an end of stream like any other.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, on_new_session);
  static const unsigned char h1[] = "\x08http/1.1";
  static const unsigned char h2[] = "\x02h2";
  static const unsigned char both[] = "\x02h2\x08http/1.1";
  int rv = 0;
  switch (protocol) {
    case Protocol::h1: rv = SSL_CTX_set_alpn_protos(ctx, h1, sizeof h1 - 1); break;
    case Protocol::h2: rv = SSL_CTX_set_alpn_protos(ctx, h2, sizeof h2 - 1); break;
    case Protocol::automatic: rv = SSL_CTX_set_alpn_protos(ctx, both, sizeof both - 1); break;
    case Protocol::h3:
    case Protocol::hq: break;  // QUIC's TLS is GnuTLS (QuicTls); this context is not used
  }
  if (rv != 0) {
    SSL_CTX_free(ctx);
    return make_error("cannot set ALPN");
  }
  return std::unique_ptr<TlsClient>(new TlsClient(ctx));
}

TlsClient::~TlsClient() { SSL_CTX_free(ctx_); }

}  // namespace torii::load
