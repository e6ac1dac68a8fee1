#include "net/quic_tls.h"

#include <gnutls/crypto.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "config/ssl_config.h"
#include "net/tls_replay_guard.h"

namespace torii::net {

namespace {

// A file, or the PEM text after "data:" (nginx's form).
int set_key_pair(gnutls_certificate_credentials_t creds, const std::string& cert, const std::string& key,
                 const char* password) {
  constexpr std::string_view kData = "data:";
  const bool cert_data = cert.rfind(kData, 0) == 0, key_data = key.rfind(kData, 0) == 0;
  if (!cert_data && !key_data)
    return gnutls_certificate_set_x509_key_file2(creds, cert.c_str(), key.c_str(), GNUTLS_X509_FMT_PEM, password, 0);
  auto bytes = [&](const std::string& source, bool data, std::string& out) {
    if (data) {
      out = source.substr(kData.size());
      return true;
    }
    std::ifstream in(source, std::ios::binary);
    out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return bool(in) || in.eof();
  };
  std::string cert_pem, key_pem;
  if (!bytes(cert, cert_data, cert_pem) || !bytes(key, key_data, key_pem)) return GNUTLS_E_FILE_ERROR;
  const gnutls_datum_t c{reinterpret_cast<unsigned char*>(cert_pem.data()), unsigned(cert_pem.size())};
  const gnutls_datum_t k{reinterpret_cast<unsigned char*>(key_pem.data()), unsigned(key_pem.size())};
  return gnutls_certificate_set_x509_key_mem2(creds, &c, &k, GNUTLS_X509_FMT_PEM, password, 0);
}

}  // namespace

Result<std::shared_ptr<gnutls_certificate_credentials_st>> build_quic_credentials(const config::SslServerConfig& s) {
  gnutls_certificate_credentials_t raw = nullptr;
  if (int rv = gnutls_certificate_allocate_credentials(&raw); rv != 0)
    return make_error(s.where + "gnutls_certificate_allocate_credentials() failed: " + gnutls_strerror(rv));
  std::shared_ptr<gnutls_certificate_credentials_st> creds(raw, &gnutls_certificate_free_credentials);
  // Each certificate (RSA, ECDSA...) with its key; GnuTLS picks the one the
  // client's signature algorithms allow, as OpenSSL does for TCP.
  for (size_t i = 0; i < s.certificates.size() && i < s.certificate_keys.size(); ++i) {
    const auto& cert = s.certificates[i];
    const auto& key = s.certificate_keys[i];
    // An encrypted key: each ssl_password_file line in turn, as for TCP.
    int rv = GNUTLS_E_DECRYPTION_FAILED;
    const size_t tries = s.passwords && !s.passwords->empty() ? s.passwords->size() : 1;
    for (size_t t = 0; t < tries && rv < 0; ++t) {
      const char* password = s.passwords && !s.passwords->empty() ? (*s.passwords)[t].c_str() : nullptr;
      rv = set_key_pair(raw, cert.path, key.path, password);
    }
    if (rv < 0) {
      return make_error(cert.where + "cannot load certificate \"" + cert.path + "\" with key \"" + key.path +
                        "\" for QUIC: " + gnutls_strerror(rv));
    }
  }
  return creds;
}

namespace {

int remember_early_data(void*, time_t expires, const gnutls_datum_t* key, const gnutls_datum_t*) {
  const std::string_view k(reinterpret_cast<const char*>(key->data), key->size);
  return TlsReplayGuard::process().first_use(k, int64_t(expires), int64_t(time(nullptr))) ? 0
                                                                                           : GNUTLS_E_DB_ENTRY_EXISTS;
}

}  // namespace

gnutls_anti_replay_t quic_anti_replay() {
  // Made once; GnuTLS only reads it afterwards, from every worker thread.
  static const gnutls_anti_replay_t guard = [] {
    gnutls_anti_replay_t g = nullptr;
    if (gnutls_anti_replay_init(&g) != 0) return gnutls_anti_replay_t(nullptr);
    gnutls_anti_replay_set_add_function(g, &remember_early_data);
    return g;
  }();
  return guard;
}

Result<std::shared_ptr<const std::string>> build_quic_ticket_key(const config::SslServerConfig& s) {
  constexpr size_t kMasterKeySize = 64;  // what gnutls_session_ticket_enable_server() takes
  if (!s.session_tickets) return std::shared_ptr<const std::string>();
  if (s.ticket_key_files.empty()) {
    static const std::shared_ptr<const std::string> process_key = [] {
      std::string k(kMasterKeySize, '\0');
      if (gnutls_rnd(GNUTLS_RND_KEY, k.data(), k.size()) != 0) return std::shared_ptr<const std::string>();
      return std::make_shared<const std::string>(std::move(k));
    }();
    if (!process_key) return make_error(s.where + "gnutls_rnd() failed: no session-ticket key for QUIC");
    return process_key;
  }
  const config::SslFile& f = s.ticket_key_files.front();
  std::ifstream in(f.path, std::ios::binary);
  if (!in) return make_error(f.where + "open() \"" + f.path + "\" failed (" + std::strerror(errno) + ")");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string k(kMasterKeySize, '\0');
  if (gnutls_hash_fast(GNUTLS_DIG_SHA512, bytes.data(), bytes.size(), k.data()) != 0)
    return make_error(f.where + "cannot derive the QUIC session-ticket key from \"" + f.path + "\"");
  return std::make_shared<const std::string>(std::move(k));
}

}  // namespace torii::net
