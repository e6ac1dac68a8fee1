// The client TLS context for https:// upstreams (proxy_ssl_*): protocols,
// ciphers, the CA file for proxy_ssl_verify, a client certificate, and
// session resumption through TlsSessionSlot (tls_client.h). Built once
// per distinct settings object at load and shared by every worker thread.
#pragma once

#include <openssl/ssl.h>

#include <memory>

#include "core/result.h"

namespace torii::config {
struct UpstreamTlsConfig;
}

namespace torii::net {

// Errors read "FILE:LINE: cannot load certificate ..." or nginx's
// "no proxy_ssl_trusted_certificate for proxy_ssl_verify".
Result<std::shared_ptr<SSL_CTX>> build_upstream_tls_context(const config::UpstreamTlsConfig& t);

}  // namespace torii::net
