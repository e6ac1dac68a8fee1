// Client certificates (ssl_verify_client and friends): the TLS context's
// side (what is asked for and what it is checked against), and the facts
// a finished handshake leaves for the request ($ssl_client_* variables,
// the 400 pages nginx answers when the certificate is missing or bad).
#pragma once

#include <memory>
#include <string>

#include "core/result.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace torii::config {
struct SslServerConfig;
struct SslFile;
}

namespace torii::net {

struct ClientCertInfo {
  bool present = false;     // the client sent a certificate
  long verify_result = 0;   // X509_V_OK or the X509_V_ERR_* code
  std::string verify;       // $ssl_client_verify: SUCCESS, FAILED:reason, NONE
  std::string subject_dn;   // RFC 2253, as nginx prints it
  std::string issuer_dn;
  std::string subject_dn_legacy;  // OpenSSL's one-line form ("/O=.../CN=..."), nginx's *_legacy
  std::string issuer_dn_legacy;
  std::string pem;          // $ssl_client_raw_cert
  std::string fingerprint;  // SHA-1 of the DER, lower-case hex
  std::string serial;       // upper-case hex
  std::string v_start;      // validity, as OpenSSL prints it ("Sep 21 08:00:00 2026 GMT")
  std::string v_end;
  int64_t not_after = 0;    // Unix seconds, for $ssl_client_v_remain
};

// Sets up verification on a context built from `s` (nothing when
// ssl_verify_client is off). As nginx, the handshake never fails for the
// certificate: the verdict is kept and judged per request, so the answer
// is an HTTP page, not a TLS alert.
Status configure_client_verification(SSL_CTX* ctx, const config::SslServerConfig& s);

// After SNI chose another server's context: take its verification too.
void adopt_client_verification(SSL* ssl, SSL_CTX* ctx);

// ssl_crl, proxy_ssl_crl, grpc_ssl_crl: the revocation lists checked for
// every certificate of a chain the context verifies (nothing when unset).
Status load_crl(SSL_CTX* ctx, const config::SslFile& crl);

// What the handshake left; null when the context asks for no certificate.
std::shared_ptr<const ClientCertInfo> read_client_cert(SSL* ssl);

// nginx's errors that ssl_verify_client optional_no_ca lets through: the
// chain could not be checked against a CA we hold.
bool verify_error_optional(long code);

}  // namespace torii::net
