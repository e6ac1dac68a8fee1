#include "net/ocsp_staple.h"

namespace torii::net {

OcspStaple::OcspStaple(X509* cert, X509* issuer, STACK_OF(X509) * chain, X509_STORE* store)
    : cert_(cert), issuer_(issuer), chain_(chain ? X509_chain_up_ref(chain) : nullptr), store_(store) {
  X509_up_ref(cert_);
  if (issuer_) X509_up_ref(issuer_);
  if (store_) X509_STORE_up_ref(store_);
}

OcspStaple::~OcspStaple() {
  X509_free(cert_);
  X509_free(issuer_);
  if (chain_) sk_X509_pop_free(chain_, X509_free);
  X509_STORE_free(store_);
}

std::shared_ptr<const std::string> OcspStaple::current(int64_t now) const {
  std::lock_guard lock(mu_);
  if (!der_ || valid_until_ < now) return nullptr;
  return der_;
}

void OcspStaple::store(std::shared_ptr<const std::string> der, int64_t valid_until) {
  std::lock_guard lock(mu_);
  der_ = std::move(der);
  valid_until_ = valid_until;
}

void OcspStaple::adopt(const OcspStaple& other) {
  if (&other == this) return;
  std::scoped_lock lock(mu_, other.mu_);
  der_ = other.der_;
  valid_until_ = other.valid_until_;
}

}  // namespace torii::net
