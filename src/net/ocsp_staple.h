// One certificate's OCSP staple: where its status is asked for, and the
// last good response. The TLS context's status callback reads it on every
// handshake that asks for a status (any worker thread); the refresher's
// thread writes it. A response past its nextUpdate is never sent.
#pragma once

#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace torii::net {

class OcspStaple {
 public:
  // Takes references to `cert`, `issuer`, `chain` and `store`.
  OcspStaple(X509* cert, X509* issuer, STACK_OF(X509) * chain, X509_STORE* store);
  ~OcspStaple();
  OcspStaple(const OcspStaple&) = delete;
  OcspStaple& operator=(const OcspStaple&) = delete;

  // The response to staple at `now` (seconds since the epoch), or null.
  std::shared_ptr<const std::string> current(int64_t now) const;
  // A good response, sent until `valid_until` (INT64_MAX: no nextUpdate).
  void store(std::shared_ptr<const std::string> der, int64_t valid_until);
  // Takes `other`'s response and validity (the same certificate in an older config).
  void adopt(const OcspStaple& other);

  X509* cert() const { return cert_; }
  X509* issuer() const { return issuer_; }
  STACK_OF(X509) * chain() const { return chain_; }
  X509_STORE* trust() const { return store_; }

  // Where to ask (http only, as nginx), and how to judge the answer.
  std::string host, port, path;
  bool verify = false;   // ssl_stapling_verify: the responder's signature must chain to a trusted CA
  std::string name;      // the certificate file, for log lines
  std::string key;       // same certificate, responder and verify: same staple across a reload
  // The refresher's schedule (its thread only, after registration).
  int64_t refresh_at = 0;

 private:
  X509* cert_;
  X509* issuer_;
  STACK_OF(X509) * chain_;
  X509_STORE* store_;
  mutable std::mutex mu_;
  std::shared_ptr<const std::string> der_;  // guarded by mu_
  int64_t valid_until_ = 0;                 // guarded by mu_
};

}  // namespace torii::net
