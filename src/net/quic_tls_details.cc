#include "net/quic_tls_details.h"

#include <openssl/obj_mac.h>

namespace torii::net {

bool GnutlsDetails::append_cipher(std::string& out) const {
  const char* name = session_ ? gnutls_ciphersuite_get(session_) : nullptr;
  if (name) out.append(name);
  return name != nullptr;
}

bool GnutlsDetails::append_session_id(std::string& out) const {
  gnutls_datum_t id{};
  if (!session_ || gnutls_session_get_id2(session_, &id) != 0 || id.size == 0) return false;
  append_hex(out, id.data, id.size);
  return true;
}

bool GnutlsDetails::append_curve(std::string& out) const {
  if (!session_) return false;
  switch (gnutls_group_get(session_)) {
    case GNUTLS_GROUP_SECP256R1: append_openssl_group(out, NID_X9_62_prime256v1); return true;
    case GNUTLS_GROUP_SECP384R1: append_openssl_group(out, NID_secp384r1); return true;
    case GNUTLS_GROUP_SECP521R1: append_openssl_group(out, NID_secp521r1); return true;
    case GNUTLS_GROUP_X25519: append_openssl_group(out, NID_X25519); return true;
    case GNUTLS_GROUP_X448: append_openssl_group(out, NID_X448); return true;
    case GNUTLS_GROUP_FFDHE2048: append_openssl_group(out, NID_ffdhe2048); return true;
    case GNUTLS_GROUP_FFDHE3072: append_openssl_group(out, NID_ffdhe3072); return true;
    case GNUTLS_GROUP_FFDHE4096: append_openssl_group(out, NID_ffdhe4096); return true;
    case GNUTLS_GROUP_FFDHE8192: append_openssl_group(out, NID_ffdhe8192); return true;
    default: return false;
  }
}

bool GnutlsDetails::append_alpn(std::string& out) const {
  gnutls_datum_t p{};
  if (!session_ || gnutls_alpn_get_selected_protocol(session_, &p) != 0 || p.size == 0) return false;
  out.append(reinterpret_cast<const char*>(p.data), p.size);
  return true;
}

}  // namespace torii::net
