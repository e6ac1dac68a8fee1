// OCSP stapling on a server's TLS context (ssl_stapling): a staple per
// certificate, sent to the clients that ask for a status. The response
// comes from ssl_stapling_file, or from the responder (ssl_stapling_responder
// or the certificate's AIA) through OcspRefresher's thread.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace torii::config {
struct SslServerConfig;
}

namespace torii::net {

// A certificate the context holds and the file it came from.
using LoadedCertificates = std::vector<std::pair<X509*, std::string>>;

// Sets stapling up on `ctx` when `s` asks for it. What it returns must live
// as long as the context. A certificate whose issuer or responder cannot
// be found is served without a staple and named in a load warning, as
// nginx does; an unreadable ssl_stapling_file fails the load.
Result<std::shared_ptr<void>> configure_ocsp_stapling(SSL_CTX* ctx, const config::SslServerConfig& s,
                                                     const LoadedCertificates& certs);

}  // namespace torii::net
