#include "net/certified_key.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <cstring>
#include <fstream>
#include <iterator>

#include "config/ssl_config.h"
#include "log/error_log.h"
#include "net/private_key.h"
#include "net/tls_context.h"

namespace torii::net {

namespace {

constexpr std::string_view kData = "data:";

// The PEM text of a source: the file's bytes, or what follows "data:".
Result<std::string> read_source(std::string_view source) {
  if (source.substr(0, kData.size()) == kData) return std::string(source.substr(kData.size()));
  std::ifstream in{std::string(source), std::ios::binary};
  if (!in) return make_error("BIO_new_file() failed (" + std::to_string(errno) + ": " + strerror(errno) + ")");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string quoted(std::string_view source) { return "\"" + std::string(source) + "\""; }

}  // namespace

CertifiedKey::~CertifiedKey() {
  X509_free(cert);
  if (chain) sk_X509_pop_free(chain, X509_free);
  EVP_PKEY_free(key);
}

Result<std::shared_ptr<const CertifiedKey>> load_certified_key(std::string_view cert_source,
                                                               std::string_view key_source,
                                                               const std::vector<std::string>* passwords) {
  auto out = std::make_shared<CertifiedKey>();
  auto pem = read_source(cert_source);
  if (!pem) return make_error("cannot load certificate " + quoted(cert_source) + ": " + pem.error());
  ERR_clear_error();
  BIO* bio = BIO_new_mem_buf(pem->data(), int(pem->size()));
  if (!bio) return make_error("cannot load certificate " + quoted(cert_source) + ": BIO_new_mem_buf() failed");
  // The certificate first, then any number of chain certificates, as in
  // SSL_CTX_use_certificate_chain_file.
  out->cert = PEM_read_bio_X509_AUX(bio, nullptr, nullptr, nullptr);
  if (!out->cert) {
    BIO_free(bio);
    return make_error("cannot load certificate " + quoted(cert_source) + ": PEM_read_bio_X509_AUX() failed (" +
                      take_ssl_errors() + ")");
  }
  while (X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (!out->chain) out->chain = sk_X509_new_null();
    if (!out->chain || !sk_X509_push(out->chain, extra)) {
      X509_free(extra);
      BIO_free(bio);
      return make_error("cannot load certificate " + quoted(cert_source) + ": out of memory");
    }
  }
  BIO_free(bio);
  ERR_clear_error();  // the end of the PEM text is reported as an error
  auto key_pem = read_source(key_source);
  if (!key_pem) return make_error("cannot load certificate key " + quoted(key_source) + ": " + key_pem.error());
  auto key = read_private_key(*key_pem, passwords);
  if (!key) return make_error("cannot load certificate key " + quoted(key_source) + ": " + key.error());
  out->key = key->get();
  EVP_PKEY_up_ref(out->key);
  if (X509_check_private_key(out->cert, out->key) != 1) {
    return make_error("cannot load certificate key " + quoted(key_source) +
                      ": the key does not match the certificate (" + take_ssl_errors() + ")");
  }
  return std::shared_ptr<const CertifiedKey>(std::move(out));
}

DynamicCertificates::DynamicCertificates(const config::SslServerConfig& s)
    : passwords_(s.passwords), base_dir_(s.conf_dir), max_(s.certificate_cache.max),
      inactive_s_(s.certificate_cache.inactive_s), valid_s_(s.certificate_cache.valid_s) {
  for (size_t i = 0; i < s.certificates.size() && i < s.certificate_keys.size(); ++i)
    pairs_.push_back({s.certificates[i].path, s.certificate_keys[i].path, s.certificates[i].where});
}

std::string DynamicCertificates::render(std::string_view pattern, std::string_view name) {
  static constexpr std::string_view kPlain = "$ssl_server_name", kBraced = "${ssl_server_name}";
  std::string out;
  for (size_t i = 0; i < pattern.size();) {
    if (pattern.substr(i, kBraced.size()) == kBraced) {
      out += name;
      i += kBraced.size();
    } else if (pattern.substr(i, kPlain.size()) == kPlain) {
      out += name;
      i += kPlain.size();
    } else {
      out += pattern[i++];
    }
  }
  return out;
}

DynamicCertificates::Stamp DynamicCertificates::stamp_of(const std::string& cert, const std::string& key) {
  Stamp st;
  struct stat sb;
  if (cert.compare(0, kData.size(), kData) != 0 && ::stat(cert.c_str(), &sb) == 0) {
    st.cert_ino = uint64_t(sb.st_ino);
    st.cert_mtime_ns = int64_t(sb.st_mtim.tv_sec) * 1'000'000'000 + sb.st_mtim.tv_nsec;
  }
  if (key.compare(0, kData.size(), kData) != 0 && ::stat(key.c_str(), &sb) == 0) {
    st.key_ino = uint64_t(sb.st_ino);
    st.key_mtime_ns = int64_t(sb.st_mtim.tv_sec) * 1'000'000'000 + sb.st_mtim.tv_nsec;
  }
  return st;
}

std::shared_ptr<const CertifiedKey> DynamicCertificates::load(const std::string& cert, const std::string& key) {
  auto loaded = load_certified_key(cert, key, passwords_.get());
  if (!loaded) {
    TORII_LOG(error, "%s while SSL handshaking", loaded.error().c_str());
    return nullptr;
  }
  return *loaded;
}

std::shared_ptr<const CertifiedKey> DynamicCertificates::get(const std::string& cert, const std::string& key) {
  if (max_ == 0) return load(cert, key);  // ssl_certificate_cache off: nginx reads them every time
  const std::string id = cert + '\n' + key;
  const int64_t now = int64_t(::time(nullptr));
  {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(id); it != cache_.end()) {
      Entry& e = it->second;
      e.used_s = now;
      order_.splice(order_.end(), order_, e.in_order);
      if (now - e.created_s <= valid_s_) return e.value;
    }
  }
  // Not kept, or kept past `valid`: the files decide. Stat and read outside
  // the lock; two handshakes for the same name may both read it.
  const Stamp stamp = stamp_of(cert, key);
  {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(id); it != cache_.end() && it->second.stamp == stamp) {
      it->second.created_s = now;  // unchanged: valid again
      return it->second.value;
    }
  }
  auto value = load(cert, key);
  std::lock_guard lock(mu_);
  if (auto it = cache_.find(id); it != cache_.end()) {  // changed, or gone: the old pair goes
    order_.erase(it->second.in_order);
    cache_.erase(it);
  }
  // Failures are not kept: the file may appear later, and a client's
  // made-up names must not fill the cache.
  if (!value) return nullptr;
  while (!order_.empty() && now - cache_[order_.front()].used_s > inactive_s_) {
    cache_.erase(order_.front());
    order_.pop_front();
  }
  while (cache_.size() >= max_ && !order_.empty()) {
    cache_.erase(order_.front());
    order_.pop_front();
  }
  order_.push_back(id);
  cache_.emplace(id, Entry{value, stamp, now, now, std::prev(order_.end())});
  return value;
}

bool DynamicCertificates::apply(SSL* ssl, std::string_view server_name) {
  // The name goes into a path: nothing that could leave the folder (nginx
  // refuses such names as a host too).
  if (server_name.find('/') != std::string_view::npos || server_name.find("..") != std::string_view::npos ||
      server_name.find('\\') != std::string_view::npos || server_name.find('\0') != std::string_view::npos) {
    TORII_LOG(info, "client SSL server name \"%.*s\" is invalid for a certificate with variables",
              int(server_name.size()), server_name.data());
    return false;
  }
  for (const auto& p : pairs_) {
    std::string cert = render(p.cert, server_name), key = render(p.key, server_name);
    // A relative name, once rendered, is relative to the main config file.
    for (auto* s : {&cert, &key}) {
      if (s->compare(0, kData.size(), kData) != 0 && !s->empty() && (*s)[0] != '/') *s = base_dir_ + *s;
    }
    auto pair = get(cert, key);
    if (!pair) return false;
    if (SSL_use_cert_and_key(ssl, pair->cert, pair->key, pair->chain, 1) != 1) {
      TORII_LOG(error, "SSL_use_cert_and_key(\"%s\") failed (%s) while SSL handshaking", cert.c_str(),
                take_ssl_errors().c_str());
      return false;
    }
  }
  return true;
}

}  // namespace torii::net
