// A certificate, its chain and its private key, read from files or from
// "data:" text (nginx's ssl_certificate forms), and the per-context store
// of pairs whose names have variables ($ssl_server_name): without
// ssl_certificate_cache (nginx's default) each handshake reads its pair;
// with it, a pair read is kept (at most `max`, the least recently used
// out), dropped once unused for `inactive`, and its files checked again
// once `valid` has passed since it was read (reread when they changed).
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"

namespace torii::config {
struct SslServerConfig;
}

namespace torii::net {

struct CertifiedKey {
  X509* cert = nullptr;
  STACK_OF(X509)* chain = nullptr;  // may be null
  EVP_PKEY* key = nullptr;
  CertifiedKey() = default;
  CertifiedKey(const CertifiedKey&) = delete;
  CertifiedKey& operator=(const CertifiedKey&) = delete;
  ~CertifiedKey();
};

// `cert_source` and `key_source` are paths or "data:PEM". Errors read
// "cannot load certificate \"...\": ..." (or "... certificate key ..."),
// as nginx's.
Result<std::shared_ptr<const CertifiedKey>> load_certified_key(std::string_view cert_source,
                                                               std::string_view key_source,
                                                               const std::vector<std::string>* passwords);

// ssl_certificate / ssl_certificate_key with variables: the handshake's
// certificate callback renders them for the SNI name and asks here.
class DynamicCertificates {
 public:
  explicit DynamicCertificates(const config::SslServerConfig& s);

  // Sets the pairs for `server_name` on `ssl` (on the handshake's thread);
  // false, with the reason logged, when one cannot be read.
  bool apply(SSL* ssl, std::string_view server_name);

  // "$ssl_server_name" (or "${ssl_server_name}") replaced by `name`.
  static std::string render(std::string_view pattern, std::string_view name);

 private:
  struct Pair {
    std::string cert, key, where;  // unrendered
  };
  std::vector<Pair> pairs_;
  std::shared_ptr<const std::vector<std::string>> passwords_;
  std::string base_dir_;  // relative names are relative to the main config file

  // What a pair was read from: a changed file (or one replaced by
  // another) is read again once the entry's `valid` time has passed.
  struct Stamp {
    uint64_t cert_ino = 0, key_ino = 0;
    int64_t cert_mtime_ns = 0, key_mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  struct Entry {
    std::shared_ptr<const CertifiedKey> value;
    Stamp stamp;
    int64_t created_s = 0;
    int64_t used_s = 0;
    std::list<std::string>::iterator in_order;
  };
  static Stamp stamp_of(const std::string& cert, const std::string& key);

  size_t max_;  // 0: no cache
  int64_t inactive_s_, valid_s_;
  std::mutex mu_;
  std::list<std::string> order_;  // least recently used first
  std::unordered_map<std::string, Entry> cache_;
  std::shared_ptr<const CertifiedKey> load(const std::string& cert, const std::string& key);
  std::shared_ptr<const CertifiedKey> get(const std::string& cert, const std::string& key);
};

}  // namespace torii::net
