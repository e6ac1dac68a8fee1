#include "net/tls_details.h"

#include <openssl/objects.h>
#include <openssl/ssl.h>

#include <cstdio>
#include <vector>

namespace torii::net {

void append_hex(std::string& out, const unsigned char* data, size_t len) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < len; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 15]);
  }
}

void append_openssl_group(std::string& out, int nid) {
  // OpenSSL marks a group it has no NID for with TLSEXT_nid_unknown.
  const char* name = (nid & TLSEXT_nid_unknown) ? nullptr : OBJ_nid2sn(nid);
  if (name) {
    out.append(name);
    return;
  }
  char buf[16];
  snprintf(buf, sizeof buf, "0x%04x", unsigned(nid & 0xffff));
  out.append(buf);
}

bool append_openssl_session_id(const SSL* ssl, std::string& out) {
  const SSL_SESSION* session = SSL_get0_session(ssl);
  if (!session) return false;
  unsigned len = 0;
  const unsigned char* id = SSL_SESSION_get_id(session, &len);
  if (len == 0) return false;
  append_hex(out, id, len);
  return true;
}

bool append_openssl_curve(const SSL* ssl, std::string& out) {
  const int nid = SSL_get_negotiated_group(const_cast<SSL*>(ssl));
  if (nid == NID_undef) return false;
  append_openssl_group(out, nid);
  return true;
}

bool append_openssl_curves(const SSL* ssl, std::string& out) {
  SSL* s = const_cast<SSL*>(ssl);
  const int n = SSL_get1_groups(s, nullptr);
  if (n <= 0) return false;
  std::vector<int> groups(size_t(n), 0);
  SSL_get1_groups(s, groups.data());
  for (int i = 0; i < n; ++i) {
    if (i) out.push_back(':');
    append_openssl_group(out, groups[size_t(i)]);
  }
  return true;
}

bool append_openssl_ciphers(const SSL* ssl, std::string& out) {
  SSL* s = const_cast<SSL*>(ssl);
  const unsigned char* raw = nullptr;
  const int bytes = SSL_get0_raw_cipherlist(s, nullptr);  // the size of one suite's code
  const int len = SSL_get0_raw_cipherlist(s, &raw);
  if (bytes <= 0 || len <= 0 || !raw) return false;
  for (int at = 0; at + bytes <= len; at += bytes) {
    if (at) out.push_back(':');
    if (const SSL_CIPHER* c = SSL_CIPHER_find(s, raw + at)) {
      out.append(SSL_CIPHER_get_name(c));
    } else {
      out.append("0x");
      append_hex(out, raw + at, size_t(bytes));
    }
  }
  return true;
}

}  // namespace torii::net
