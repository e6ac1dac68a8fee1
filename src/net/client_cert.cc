#include "net/client_cert.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "config/ssl_config.h"

namespace torii::net {

namespace {

// The handshake goes on whatever the chain looks like (nginx's callback
// does the same); the result waits in SSL_get_verify_result.
int accept_any(int, X509_STORE_CTX*) { return 1; }

std::string ssl_errors() {
  std::string out;
  char buf[256];
  while (unsigned long e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown error" : out;
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return len > 0 ? std::string(data, static_cast<size_t>(len)) : std::string();
}

std::string name_text(const X509_NAME* name) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (!bio) return {};
  X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
  std::string out = bio_text(bio);
  BIO_free(bio);
  return out;
}

}  // namespace

Status configure_client_verification(SSL_CTX* ctx, const config::SslServerConfig& s) {
  using V = config::SslServerConfig::VerifyClient;
  if (s.verify_client == V::off) return Ok{};
  if (s.verify_client != V::optional_no_ca && s.client_certificate.path.empty() && s.trusted_certificate.path.empty())
    return make_error(s.where + "no ssl_client_certificate for ssl_verify_client");
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any);
  SSL_CTX_set_verify_depth(ctx, s.verify_depth);
  ERR_clear_error();
  if (!s.client_certificate.path.empty()) {
    const char* path = s.client_certificate.path.c_str();
    if (SSL_CTX_load_verify_locations(ctx, path, nullptr) != 1)
      return make_error(s.client_certificate.where + "SSL_CTX_load_verify_locations(\"" + s.client_certificate.path +
                        "\") failed (" + ssl_errors() + ")");
    // The names of these CAs go to the client in the certificate request.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(path);
    if (!names)
      return make_error(s.client_certificate.where + "SSL_load_client_CA_file(\"" + s.client_certificate.path +
                        "\") failed (" + ssl_errors() + ")");
    SSL_CTX_set_client_CA_list(ctx, names);
  }
  if (!s.trusted_certificate.path.empty() &&
      SSL_CTX_load_verify_locations(ctx, s.trusted_certificate.path.c_str(), nullptr) != 1)
    return make_error(s.trusted_certificate.where + "SSL_CTX_load_verify_locations(\"" +
                      s.trusted_certificate.path + "\") failed (" + ssl_errors() + ")");
  if (Status st = load_crl(ctx, s.crl); !st) return st;
  ERR_clear_error();
  return Ok{};
}

Status load_crl(SSL_CTX* ctx, const config::SslFile& crl) {
  if (crl.path.empty()) return Ok{};
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  X509_LOOKUP* lookup = store ? X509_STORE_add_lookup(store, X509_LOOKUP_file()) : nullptr;
  if (!lookup || X509_load_crl_file(lookup, crl.path.c_str(), X509_FILETYPE_PEM) <= 0)
    return make_error(crl.where + "X509_LOOKUP_load_file(\"" + crl.path + "\") failed (" + ssl_errors() + ")");
  X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
  return Ok{};
}

void adopt_client_verification(SSL* ssl, SSL_CTX* ctx) {
  SSL_set_verify(ssl, SSL_CTX_get_verify_mode(ctx), SSL_CTX_get_verify_callback(ctx));
  SSL_set_verify_depth(ssl, SSL_CTX_get_verify_depth(ctx));
}

std::shared_ptr<const ClientCertInfo> read_client_cert(SSL* ssl) {
  if (SSL_get_verify_mode(ssl) == SSL_VERIFY_NONE) return nullptr;
  auto info = std::make_shared<ClientCertInfo>();
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) {
    info->verify = "NONE";
    return info;
  }
  info->present = true;
  info->verify_result = SSL_get_verify_result(ssl);
  info->verify = info->verify_result == X509_V_OK
                     ? "SUCCESS"
                     : std::string("FAILED:") + X509_verify_cert_error_string(info->verify_result);
  info->subject_dn = name_text(X509_get_subject_name(cert));
  info->issuer_dn = name_text(X509_get_issuer_name(cert));
  for (auto [name, out] : {std::pair{X509_get_subject_name(cert), &info->subject_dn_legacy},
                           std::pair{X509_get_issuer_name(cert), &info->issuer_dn_legacy}}) {
    if (char* line = X509_NAME_oneline(name, nullptr, 0)) {
      out->assign(line);
      OPENSSL_free(line);
    }
  }
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    PEM_write_bio_X509(bio, cert);
    info->pem = bio_text(bio);
    BIO_free(bio);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  if (X509_digest(cert, EVP_sha1(), md, &md_len)) {
    static const char kHex[] = "0123456789abcdef";
    for (unsigned i = 0; i < md_len; ++i) {
      info->fingerprint += kHex[md[i] >> 4];
      info->fingerprint += kHex[md[i] & 15];
    }
  }
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    i2a_ASN1_INTEGER(bio, X509_get_serialNumber(cert));
    info->serial = bio_text(bio);
    BIO_free(bio);
  }
  for (auto [when, out] : {std::pair{X509_get0_notBefore(cert), &info->v_start},
                           std::pair{X509_get0_notAfter(cert), &info->v_end}}) {
    if (BIO* bio = BIO_new(BIO_s_mem())) {
      ASN1_TIME_print(bio, when);
      *out = bio_text(bio);
      BIO_free(bio);
    }
  }
  if (struct tm tm {}; ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) == 1) info->not_after = timegm(&tm);
  X509_free(cert);
  ERR_clear_error();
  return info;
}

bool verify_error_optional(long code) {
  return code == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT || code == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
         code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT || code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
         code == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE || code == X509_V_ERR_CERT_UNTRUSTED;
}

}  // namespace torii::net
