#include "modules/client_cert/client_cert.h"

#include <ctime>

#include "config/ssl_config.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "log/error_log.h"
#include "http/uri_component.h"
#include "net/client_cert.h"

namespace torii::client_cert {

int check(http::Exchange& ex) {
  const auto& conn = ex.conn();
  if (!conn.tls || !ex.server || !ex.server->ssl) return 0;
  using V = config::SslServerConfig::VerifyClient;
  const V mode = ex.server->ssl->verify_client;
  if (mode == V::off) return 0;
  const net::ClientCertInfo* cert = conn.client_cert.get();
  // A server without verification shared the handshake (no SNI, or the
  // default server's context): it asked for nothing, so nothing came.
  if (cert && cert->present && cert->verify_result != 0 &&
      !(mode == V::optional_no_ca && net::verify_error_optional(cert->verify_result))) {
    TORII_LOG_EX(ex, info, "client SSL certificate verify error: (%ld:%s)%s", cert->verify_result,
              cert->verify.c_str() + 7, http::log_context(ex).c_str());
    return 495;
  }
  if (mode == V::on && (!cert || !cert->present)) {
    TORII_LOG_EX(ex, info, "client sent no required SSL certificate%s", http::log_context(ex).c_str());
    return 496;
  }
  return 0;
}


void append_cert_field(const net::ClientCertInfo* cert, CertField field, std::string& out) {
  if (field == CertField::verify) {
    out += cert ? cert->verify : "NONE";
    return;
  }
  if (!cert || !cert->present) return;  // empty, as nginx
  switch (field) {
    case CertField::subject_dn: out += cert->subject_dn; break;
    case CertField::issuer_dn: out += cert->issuer_dn; break;
    case CertField::subject_dn_legacy: out += cert->subject_dn_legacy; break;
    case CertField::issuer_dn_legacy: out += cert->issuer_dn_legacy; break;
    case CertField::raw_cert: out += cert->pem; break;
    case CertField::cert:
      // The deprecated form: every line after the first starts with a tab.
      for (size_t i = 0; i + 1 < cert->pem.size(); ++i) {
        out += cert->pem[i];
        if (cert->pem[i] == '\n') out += '\t';
      }
      break;
    case CertField::escaped_cert: http::append_uri_component(out, cert->pem); break;
    case CertField::fingerprint: out += cert->fingerprint; break;
    case CertField::serial: out += cert->serial; break;
    case CertField::v_start: out += cert->v_start; break;
    case CertField::v_end: out += cert->v_end; break;
    case CertField::v_remain: {
      const int64_t now = static_cast<int64_t>(::time(nullptr));
      out += std::to_string(cert->not_after < now + 86400 ? 0 : (cert->not_after - now) / 86400);
      break;
    }
    case CertField::verify: break;
  }
}

bool append_variable(config::VarId id, const http::Exchange& ex, std::string& out) {
  using config::VarId;
  const auto& conn = ex.conn();
  if (!conn.tls) return false;
  CertField field;
  switch (id) {
    case VarId::ssl_client_verify: field = CertField::verify; break;
    case VarId::ssl_client_s_dn: field = CertField::subject_dn; break;
    case VarId::ssl_client_i_dn: field = CertField::issuer_dn; break;
    case VarId::ssl_client_s_dn_legacy: field = CertField::subject_dn_legacy; break;
    case VarId::ssl_client_i_dn_legacy: field = CertField::issuer_dn_legacy; break;
    case VarId::ssl_client_raw_cert: field = CertField::raw_cert; break;
    case VarId::ssl_client_cert: field = CertField::cert; break;
    case VarId::ssl_client_escaped_cert: field = CertField::escaped_cert; break;
    case VarId::ssl_client_fingerprint: field = CertField::fingerprint; break;
    case VarId::ssl_client_serial: field = CertField::serial; break;
    case VarId::ssl_client_v_start: field = CertField::v_start; break;
    case VarId::ssl_client_v_end: field = CertField::v_end; break;
    case VarId::ssl_client_v_remain: field = CertField::v_remain; break;
    default: return false;
  }
  append_cert_field(conn.client_cert.get(), field, out);
  return true;
}

}  // namespace torii::client_cert
