// ssl_verify_client at request time, as nginx does it: the handshake let
// any certificate through, the request's server decides (400 pages with
// nginx's texts, internal statuses 495 and 496 for error_page), and the
// $ssl_client_* variables.
#pragma once

#include <cstdint>
#include <string>

#include "config/template.h"

namespace torii::http {
class Exchange;
}
namespace torii::net {
struct ClientCertInfo;
}

namespace torii::client_cert {

// 0: go on; 495: the certificate did not verify; 496: none was sent and
// `ssl_verify_client on` requires one. Logs nginx's info line.
int check(http::Exchange& ex);

bool append_variable(config::VarId id, const http::Exchange& ex, std::string& out);

// One $ssl_client_* value of a TLS connection, for http and stream alike:
// `cert` is what the handshake left (null: no certificate was asked for).
// Without a certificate, verify is "NONE" and the others are empty.
enum class CertField : uint8_t {
  verify,
  subject_dn,
  issuer_dn,
  subject_dn_legacy,
  issuer_dn_legacy,
  raw_cert,
  cert,
  escaped_cert,
  fingerprint,
  serial,
  v_start,
  v_end,
  v_remain  // whole days left; 0 in the last day and after
};
void append_cert_field(const net::ClientCertInfo* cert, CertField field, std::string& out);

}  // namespace torii::client_cert
