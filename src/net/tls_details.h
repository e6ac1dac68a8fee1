// What the $ssl_* variables ask of a connection's TLS session
// ($ssl_protocol, $ssl_cipher, $ssl_ciphers, $ssl_session_id, $ssl_curve,
// $ssl_curves, $ssl_alpn_protocol): looked up in the TLS library when a variable is
// read, so a connection stores none of it (an idle connection's memory
// counts). TLS over TCP (OpenSSL) and QUIC (GnuTLS) each answer; the names
// are OpenSSL's short names, as nginx's.
#pragma once

#include <string>

typedef struct ssl_st SSL;

namespace torii::net {

class TlsDetails {
 public:
  // Each appends nothing and returns false when there is no value.
  virtual bool append_protocol(std::string& out) const = 0;    // "TLSv1.3"
  virtual bool append_cipher(std::string& out) const = 0;      // "TLS_AES_128_GCM_SHA256"
  virtual bool append_session_id(std::string& out) const = 0;  // lower-case hex
  virtual bool append_curve(std::string& out) const = 0;       // the key exchange group
  virtual bool append_curves(std::string& out) const = 0;      // the client's groups, ':'-separated
  virtual bool append_ciphers(std::string& out) const = 0;     // the client's cipher suites, ':'-separated
  virtual bool append_alpn(std::string& out) const = 0;        // the protocol ALPN chose

 protected:
  ~TlsDetails() = default;
};

// Lower-case hex of `len` bytes, as nginx's ngx_hex_dump.
void append_hex(std::string& out, const unsigned char* data, size_t len);

// OpenSSL's short name of a group ("X25519", "prime256v1"), or nginx's
// "0x%04x" for one OpenSSL does not know.
void append_openssl_group(std::string& out, int nid);

// The OpenSSL side (TLS over TCP, the stream module's TLS).
bool append_openssl_session_id(const SSL* ssl, std::string& out);
bool append_openssl_curve(const SSL* ssl, std::string& out);
bool append_openssl_curves(const SSL* ssl, std::string& out);
// The suites of the client's hello in its order: OpenSSL's names, "0x" and
// the hex of one it does not know (as nginx's $ssl_ciphers).
bool append_openssl_ciphers(const SSL* ssl, std::string& out);

}  // namespace torii::net
