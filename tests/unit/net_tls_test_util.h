// Test helpers for TLS: a temporary folder with self-signed certificates
// made in-process (EC P-256: fast), and configs loaded from text.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "config/loader.h"

namespace torii::testing {

class TlsDir {
 public:
  TlsDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "torii-tls-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
    path_ += '/';
  }
  ~TlsDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ + name, std::ios::binary) << text;
    return path_ + name;
  }

  // NAME.crt and NAME.key for CN=cn.
  void make_cert(const std::string& name, const std::string& cn) const {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, key);
    X509_NAME* n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509_set_issuer_name(x, n);
    X509_sign(x, key, EVP_sha256());
    FILE* f = fopen((path_ + name + ".crt").c_str(), "w");
    PEM_write_X509(f, x);
    fclose(f);
    f = fopen((path_ + name + ".key").c_str(), "w");
    PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
    fclose(f);
    X509_free(x);
    EVP_PKEY_free(key);
  }

  Result<std::shared_ptr<const config::Config>> load(const std::string& http_body) const {
    std::string text = "events {}\nhttp {\n" + http_body + "\n}\n";
    auto file = write("torii.conf", text);
    return config::load(file, path_, "");
  }

 private:
  std::string path_;
};

}  // namespace torii::testing
