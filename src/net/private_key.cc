#include "net/private_key.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "net/tls_context.h"

namespace torii::net {

namespace {

// Gives OpenSSL the one password being tried; none when there is no file.
int give_password(char* buf, int size, int rwflag, void* userdata) {
  const auto* password = static_cast<const std::string*>(userdata);
  if (rwflag || !password) return 0;
  const int len = std::min(size, int(password->size()));
  std::memcpy(buf, password->data(), size_t(len));
  return len;
}

}  // namespace

Result<PrivateKey> read_private_key(std::string_view pem, const std::vector<std::string>* passwords) {
  const size_t tries = passwords && !passwords->empty() ? passwords->size() : 1;
  for (size_t i = 0; i < tries; ++i) {
    ERR_clear_error();
    BIO* bio = BIO_new_mem_buf(pem.data(), int(pem.size()));
    if (!bio) return make_error("BIO_new_mem_buf() failed");
    const std::string* password = passwords && !passwords->empty() ? &(*passwords)[i] : nullptr;
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, give_password, const_cast<std::string*>(password));
    BIO_free(bio);
    if (key) {
      ERR_clear_error();
      return PrivateKey(key, &EVP_PKEY_free);
    }
  }
  return make_error("PEM_read_bio_PrivateKey() failed (" + take_ssl_errors() + ")");
}

Result<PrivateKey> load_private_key(const std::string& path, const std::vector<std::string>* passwords) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error("cannot load certificate key \"" + path + "\": BIO_new_file() failed (" +
                      std::to_string(errno) + ": " + strerror(errno) + ")");
  }
  const std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto key = read_private_key(pem, passwords);
  if (!key) return make_error("cannot load certificate key \"" + path + "\": " + key.error());
  return key;
}

}  // namespace torii::net
