#include "net/ocsp_stapling.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/http.h>
#include <openssl/ocsp.h>
#include <openssl/x509v3.h>

#include <cstring>
#include <ctime>
#include <strings.h>

#include "config/config.h"
#include "config/ssl_config.h"
#include "net/ocsp_refresher.h"
#include "net/ocsp_staple.h"
#include "net/tls_context.h"

namespace torii::net {

namespace {

struct StapleSet {
  std::vector<std::shared_ptr<OcspStaple>> staples;
};

int staples_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// Runs in the handshake of a client that asked for the certificate's
// status, on the context SNI chose: a copy of the staple (OpenSSL frees
// it), or nothing.
int on_status_request(SSL* ssl, void*) {
  X509* cert = SSL_get_certificate(ssl);
  auto* set = static_cast<StapleSet*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), staples_index()));
  if (!cert || !set) return SSL_TLSEXT_ERR_NOACK;
  for (const auto& st : set->staples) {
    if (st->cert() != cert) continue;
    auto der = st->current(int64_t(std::time(nullptr)));
    if (!der || der->empty()) return SSL_TLSEXT_ERR_NOACK;
    auto* copy = static_cast<unsigned char*>(OPENSSL_malloc(der->size()));
    if (!copy) return SSL_TLSEXT_ERR_NOACK;
    std::memcpy(copy, der->data(), der->size());
    SSL_set_tlsext_status_ocsp_resp(ssl, copy, long(der->size()));
    return SSL_TLSEXT_ERR_OK;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

void warn(const std::string& message) { config::load_warnings().push_back(message); }

// The issuer from the certificate's own chain, else from the trusted store
// (ssl_trusted_certificate), as nginx looks for it. Null: not found.
X509* find_issuer(X509* cert, STACK_OF(X509) * chain, X509_STORE* store) {
  for (int i = 0; chain && i < sk_X509_num(chain); ++i) {
    X509* candidate = sk_X509_value(chain, i);
    if (X509_check_issued(candidate, cert) == X509_V_OK) {
      X509_up_ref(candidate);
      return candidate;
    }
  }
  X509* issuer = nullptr;
  X509_STORE_CTX* sctx = X509_STORE_CTX_new();
  if (sctx && X509_STORE_CTX_init(sctx, store, nullptr, nullptr) == 1 &&
      X509_STORE_CTX_get1_issuer(&issuer, sctx, cert) != 1)
    issuer = nullptr;
  X509_STORE_CTX_free(sctx);
  ERR_clear_error();
  return issuer;
}

std::string fingerprint(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  X509_digest(cert, EVP_sha256(), md, &len);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

// The responder's URL: the directive's, else the certificate's first AIA
// OCSP entry. Empty (with a warning) when there is none or it is not http.
std::string responder_url(X509* cert, const config::SslServerConfig& s, const std::string& name) {
  std::string url = s.stapling_responder;
  if (url.empty()) {
    STACK_OF(OPENSSL_STRING)* aia = X509_get1_ocsp(cert);
    if (aia && sk_OPENSSL_STRING_num(aia) > 0) url = sk_OPENSSL_STRING_value(aia, 0);
    X509_email_free(aia);
    if (url.empty()) {
      warn("\"ssl_stapling\" ignored, no OCSP responder URL in the certificate \"" + name + "\"");
      return {};
    }
  }
  if (url.size() <= 7 || strncasecmp(url.c_str(), "http://", 7) != 0) {
    warn("\"ssl_stapling\" ignored, invalid URL prefix in OCSP responder \"" + url + "\" in the certificate \"" +
         name + "\"");
    return {};
  }
  return url;
}

Result<std::shared_ptr<const std::string>> read_stapling_file(const config::SslFile& f) {
  BIO* bio = BIO_new_file(f.path.c_str(), "rb");
  if (!bio) return make_error(f.where + "BIO_new_file(\"" + f.path + "\") failed (" + take_ssl_errors() + ")");
  OCSP_RESPONSE* rsp = d2i_OCSP_RESPONSE_bio(bio, nullptr);
  BIO_free(bio);
  if (!rsp) return make_error(f.where + "d2i_OCSP_RESPONSE_bio(\"" + f.path + "\") failed (" + take_ssl_errors() + ")");
  unsigned char* der = nullptr;
  const int len = i2d_OCSP_RESPONSE(rsp, &der);
  OCSP_RESPONSE_free(rsp);
  if (len <= 0) return make_error(f.where + "i2d_OCSP_RESPONSE(\"" + f.path + "\") failed");
  auto out = std::make_shared<const std::string>(reinterpret_cast<const char*>(der), size_t(len));
  OPENSSL_free(der);
  return out;
}

}  // namespace

Result<std::shared_ptr<void>> configure_ocsp_stapling(SSL_CTX* ctx, const config::SslServerConfig& s,
                                                     const LoadedCertificates& certs) {
  if (!s.stapling) return std::shared_ptr<void>();
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  // nginx reads ssl_trusted_certificate whatever ssl_verify_client says;
  // the client certificate setup has loaded it already when that is on.
  if (s.verify_client == config::SslServerConfig::VerifyClient::off && !s.trusted_certificate.path.empty() &&
      SSL_CTX_load_verify_locations(ctx, s.trusted_certificate.path.c_str(), nullptr) != 1) {
    return make_error(s.trusted_certificate.where + "SSL_CTX_load_verify_locations(\"" + s.trusted_certificate.path +
                      "\") failed (" + take_ssl_errors() + ")");
  }
  std::shared_ptr<const std::string> file_response;
  if (!s.stapling_file.path.empty()) {
    auto r = read_stapling_file(s.stapling_file);
    if (!r) return Error{r.error()};
    file_response = *r;
  }
  auto set = std::make_shared<StapleSet>();
  for (const auto& [cert, name] : certs) {
    STACK_OF(X509)* chain = nullptr;
    // A later certificate of the same key type replaced this one: skip it.
    if (SSL_CTX_select_current_cert(ctx, cert) != 1) {
      ERR_clear_error();
      continue;
    }
    SSL_CTX_get0_chain_certs(ctx, &chain);
    if (file_response) {
      // The file's response is sent as it is, for as long as the config lives.
      auto st = std::make_shared<OcspStaple>(cert, nullptr, chain, store);
      st->name = name;
      st->store(file_response, INT64_MAX);
      set->staples.push_back(std::move(st));
      continue;
    }
    X509* issuer = find_issuer(cert, chain, store);
    if (!issuer) {
      warn("\"ssl_stapling\" ignored, issuer certificate not found for certificate \"" + name + "\"");
      continue;
    }
    const std::string url = responder_url(cert, s, name);
    char *host = nullptr, *port = nullptr, *path = nullptr;
    int use_ssl = 0;
    if (!url.empty() &&
        OSSL_HTTP_parse_url(url.c_str(), &use_ssl, nullptr, &host, &port, nullptr, &path, nullptr, nullptr) != 1) {
      ERR_clear_error();
      warn("\"ssl_stapling\" ignored, invalid OCSP responder \"" + url + "\" in the certificate \"" + name + "\"");
    }
    if (host && port) {
      auto st = std::make_shared<OcspStaple>(cert, issuer, chain, store);
      st->host = host;
      st->port = port;
      st->path = path && *path ? path : "/";
      st->verify = s.stapling_verify;
      st->name = name;
      st->key = fingerprint(cert) + " " + url + (s.stapling_verify ? " verify" : "");
      set->staples.push_back(st);
      OcspRefresher::process().add(st);
    }
    OPENSSL_free(host);
    OPENSSL_free(port);
    OPENSSL_free(path);
    X509_free(issuer);
  }
  SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_FIRST);
  SSL_CTX_set_ex_data(ctx, staples_index(), set.get());
  SSL_CTX_set_tlsext_status_cb(ctx, on_status_request);
  return std::shared_ptr<void>(set);
}

}  // namespace torii::net
