#include "modules/auth_basic/password.h"

#include <crypt.h>
#include <dlfcn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace torii::auth {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool equal_secret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string base64(const unsigned char* data, size_t len) {
  std::string out(4 * ((len + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(len));
  out.resize(n > 0 ? size_t(n) : 0);
  return out;
}

bool unbase64(std::string_view in, std::string& out) {
  if (in.empty() || in.size() % 4) return false;
  out.assign(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return false;
  size_t len = size_t(n);
  for (size_t i = in.size(); i > 0 && in[i - 1] == '='; --i) --len;  // EVP counts the padding
  out.resize(len);
  return true;
}

// {SHA}base64(sha1(password)); {SSHA}base64(sha1(password + salt) + salt).
PasswordCheck check_sha(std::string_view password, std::string_view hash, bool salted) {
  std::string salt;
  if (salted) {
    std::string raw;
    // A malformed hash matches no password (nginx's 401), it is no error.
    if (!unbase64(hash, raw) || raw.size() < SHA_DIGEST_LENGTH) return PasswordCheck::mismatch;
    salt = raw.substr(SHA_DIGEST_LENGTH);
  }
  unsigned char digest[SHA_DIGEST_LENGTH + 64];
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  unsigned int len = 0;
  bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr) &&
            EVP_DigestUpdate(ctx, password.data(), password.size()) &&
            EVP_DigestUpdate(ctx, salt.data(), salt.size()) && EVP_DigestFinal_ex(ctx, digest, &len);
  EVP_MD_CTX_free(ctx);
  if (!ok || salt.size() > 64) return PasswordCheck::error;
  memcpy(digest + len, salt.data(), salt.size());
  std::string encoded = base64(digest, len + salt.size());
  return equal_secret(encoded, hash) ? PasswordCheck::match : PasswordCheck::mismatch;
}

// libaprutil's apr_password_validate(password, hash): 0 when they match.
using AprValidate = int (*)(const char*, const char*);

AprValidate apr_validate() {
  static AprValidate fn = [] () -> AprValidate {
    void* lib = dlopen("libaprutil-1.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    return reinterpret_cast<AprValidate>(dlsym(lib, "apr_password_validate"));
  }();
  return fn;
}

PasswordCheck check_crypt(const std::string& password, const std::string& hash, std::string* why) {
  thread_local std::unique_ptr<crypt_data> data;
  if (!data) data = std::make_unique<crypt_data>();
  memset(data.get(), 0, sizeof(crypt_data));
  const char* out = crypt_r(password.c_str(), hash.c_str(), data.get());
  // libxcrypt answers an unknown scheme with a string starting with '*'.
  if (!out || out[0] == '*') {
    if (why) *why = "crypt_r() failed: unsupported or invalid hash";
    return PasswordCheck::error;
  }
  return equal_secret(out, hash) ? PasswordCheck::match : PasswordCheck::mismatch;
}

}  // namespace

PasswordCheck check_password(std::string_view password, const std::string& hash, std::string* why) {
  std::string_view h = hash;
  if (starts_with(h, "{PLAIN}")) return equal_secret(h.substr(7), password) ? PasswordCheck::match : PasswordCheck::mismatch;
  if (starts_with(h, "{SHA}")) return check_sha(password, h.substr(5), false);
  if (starts_with(h, "{SSHA}")) return check_sha(password, h.substr(6), true);
  std::string pw(password);
  if (pw.find('\0') != std::string::npos) return PasswordCheck::mismatch;
  if (starts_with(h, "$apr1$")) {
    AprValidate fn = apr_validate();
    if (!fn) {
      if (why) *why = "$apr1$ hashes need libaprutil-1.so.0, which is not installed";
      return PasswordCheck::error;
    }
    return fn(pw.c_str(), hash.c_str()) == 0 ? PasswordCheck::match : PasswordCheck::mismatch;
  }
  return check_crypt(pw, hash, why);
}

}  // namespace torii::auth
