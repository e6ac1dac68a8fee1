// TlsDetails over a QUIC connection's GnuTLS session (HTTP/3), with
// GnuTLS's group names turned into OpenSSL's short names so a variable
// reads the same over every protocol.
#pragma once

#include <gnutls/gnutls.h>

#include "net/tls_details.h"

namespace torii::net {

class GnutlsDetails final : public TlsDetails {
 public:
  explicit GnutlsDetails(gnutls_session_t session = nullptr) : session_(session) {}

  bool append_protocol(std::string& out) const override {
    out.append("TLSv1.3");  // QUIC carries nothing older
    return true;
  }
  bool append_cipher(std::string& out) const override;
  bool append_session_id(std::string& out) const override;
  bool append_curve(std::string& out) const override;
  bool append_curves(std::string&) const override { return false; }  // GnuTLS does not say
  bool append_ciphers(std::string&) const override { return false; }  // nor this
  bool append_alpn(std::string& out) const override;

 private:
  gnutls_session_t session_;
};

}  // namespace torii::net
