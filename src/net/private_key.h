// Reading a certificate's private key the way nginx does: PEM, and when it
// is encrypted, each ssl_password_file line tried in order. Never asks the
// terminal for a passphrase (OpenSSL's default when no callback is given).
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace torii::net {

using PrivateKey = std::shared_ptr<EVP_PKEY>;

// `pem` holds the key's text. `passwords` may be null (no password file).
// The error is OpenSSL's, e.g. "PEM_read_bio_PrivateKey() failed (...)".
Result<PrivateKey> read_private_key(std::string_view pem, const std::vector<std::string>* passwords);

// The same from a file; errors name the file.
Result<PrivateKey> load_private_key(const std::string& path, const std::vector<std::string>* passwords);

}  // namespace torii::net
