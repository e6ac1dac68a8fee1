// Checks a password against one htpasswd hash the way nginx's ngx_crypt
// does: {PLAIN}, {SHA} and {SSHA} (base64 SHA-1, OpenSSL), $apr1$ (Apache's
// MD5, through libaprutil's apr_password_validate when that library is
// installed: neither libcrypt nor OpenSSL's library offers it), anything
// else through libcrypt's crypt_r (bcrypt $2y$/$2b$, SHA-512 $6$, SHA-256
// $5$, MD5 $1$, DES).
#pragma once

#include <string>
#include <string_view>

namespace torii::auth {

enum class PasswordCheck : unsigned char { match, mismatch, error };

// `error`: the scheme is unknown or its library missing (`why` says which).
PasswordCheck check_password(std::string_view password, const std::string& hash, std::string* why = nullptr);

}  // namespace torii::auth
