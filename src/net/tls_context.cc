#include "net/tls_context.h"
#include "core/quote.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include "config/ssl_config.h"
#include "net/client_cert.h"
#include "net/ocsp_stapling.h"
#include "net/certified_key.h"
#include "net/session_store.h"
#include "net/tls_replay_guard.h"

namespace torii::net {

namespace {

// A key from an ssl_session_ticket_key file, laid out as nginx reads it:
// 48 bytes = name(16) aes-128(16) hmac(16); 80 bytes = name(16) hmac(32) aes-256(32).
struct TicketKey {
  unsigned char name[16];
  unsigned char aes[32];
  unsigned char hmac[32];
  size_t key_len;  // 16 or 32
};

struct TicketKeys {
  std::vector<TicketKey> keys;  // keys[0] encrypts; all decrypt
};

int ticket_keys_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

int ticket_callback(SSL* ssl, unsigned char* name, unsigned char* iv, EVP_CIPHER_CTX* cctx, EVP_MAC_CTX* mctx,
                    int enc) {
  auto* keys = static_cast<TicketKeys*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ticket_keys_index()));
  if (!keys || keys->keys.empty()) return -1;
  const TicketKey* key = nullptr;
  size_t index = 0;
  if (enc) {
    key = &keys->keys[0];
    std::memcpy(name, key->name, 16);
    if (RAND_bytes(iv, 16) != 1) return -1;
  } else {
    for (; index < keys->keys.size(); ++index) {
      if (std::memcmp(name, keys->keys[index].name, 16) == 0) {
        key = &keys->keys[index];
        break;
      }
    }
    if (!key) return 0;  // not ours (or an old key): a full handshake and a new ticket
  }
  const EVP_CIPHER* cipher = key->key_len == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, const_cast<unsigned char*>(key->hmac), key->key_len),
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  if (EVP_MAC_CTX_set_params(mctx, params) != 1) return -1;
  if (enc) {
    if (EVP_EncryptInit_ex(cctx, cipher, nullptr, key->aes, iv) != 1) return -1;
    return 1;
  }
  if (EVP_DecryptInit_ex(cctx, cipher, nullptr, key->aes, iv) != 1) return -1;
  // 2 asks OpenSSL for a fresh ticket: always in TLS 1.3, where clients
  // (browsers, curl) use each ticket once and a resumption that brings no
  // new one leaves the next connection a full handshake; in TLS 1.2 when
  // an older key decrypted it, so it moves to the current key.
  if (SSL_version(ssl) >= TLS1_3_VERSION) return 2;
  return index == 0 ? 1 : 2;
}

Result<std::shared_ptr<TicketKeys>> load_ticket_keys(const config::SslServerConfig& s) {
  auto keys = std::make_shared<TicketKeys>();
  for (const auto& f : s.ticket_key_files) {
    std::ifstream in(f.path, std::ios::binary);
    if (!in) return make_error(f.where + "open() " + q(f.path) + " failed (" + std::strerror(errno) + ")");
    std::vector<char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (buf.size() != 48 && buf.size() != 80) {
      return make_error(f.where + q(f.path) + " must be 80 or 48 bytes");
    }
    TicketKey k{};
    const auto* b = reinterpret_cast<const unsigned char*>(buf.data());
    std::memcpy(k.name, b, 16);
    if (buf.size() == 48) {
      k.key_len = 16;
      std::memcpy(k.aes, b + 16, 16);
      std::memcpy(k.hmac, b + 32, 16);
    } else {
      k.key_len = 32;
      std::memcpy(k.hmac, b + 16, 32);
      std::memcpy(k.aes, b + 48, 32);
    }
    keys->keys.push_back(k);
  }
  return keys;
}

// The ticket keys of a shared:NAME session cache without key files:
// random, made once per process and kept by name, so the tickets issued
// before a reload (which builds new contexts) still resume after it.
std::shared_ptr<TicketKeys> cache_ticket_keys(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<TicketKeys>> by_name;
  std::lock_guard lock(mu);
  auto& keys = by_name[name];
  if (!keys) {
    TicketKey k{};
    k.key_len = 32;
    if (RAND_bytes(k.name, 16) != 1 || RAND_bytes(k.aes, 32) != 1 || RAND_bytes(k.hmac, 32) != 1) return nullptr;
    keys = std::make_shared<TicketKeys>();
    keys->keys.push_back(k);
  }
  return keys;
}

// Early data once per ticket (see tls_replay_guard.h). Called only when
// OpenSSL would otherwise accept it, so the session is the resumed one.
int allow_early_data(SSL* ssl, void*) {
  const SSL_SESSION* session = SSL_get0_session(ssl);
  if (!session) return 0;
  unsigned int len = 0;
  const unsigned char* id = SSL_SESSION_get_id(session, &len);
  if (len == 0) return 0;
  const int64_t expires = int64_t(SSL_SESSION_get_time(session)) + int64_t(SSL_SESSION_get_timeout(session));
  return TlsReplayGuard::process().first_use({reinterpret_cast<const char*>(id), len}, expires,
                                             int64_t(std::time(nullptr)))
             ? 1
             : 0;
}

struct CtxDeleter {
  std::shared_ptr<TicketKeys> keys;     // live as long as the context that points at them
  std::shared_ptr<SessionStore> store;
  std::shared_ptr<void> stapling;  // the staples the status callback reads
  std::shared_ptr<DynamicCertificates> dynamic;  // what the certificate callback reads
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};

// OpenSSL calls this for every ClientHello, with or without a server name.
int on_server_name(SSL* ssl, int* alert, void*) {
  auto* hooks = static_cast<TlsHandshakeHooks*>(SSL_get_app_data(ssl));
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (hooks && !hooks->on_server_name(ssl, name ? name : "")) {
    *alert = SSL_AD_UNRECOGNIZED_NAME;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  return SSL_TLSEXT_ERR_OK;
}

// Picks our most preferred protocol that the client offers. A client that
// offers ALPN but none of ours is refused, as nginx does.
int on_alpn(SSL* ssl, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned inlen,
            void*) {
  auto* hooks = static_cast<TlsHandshakeHooks*>(SSL_get_app_data(ssl));
  if (!hooks) return SSL_TLSEXT_ERR_NOACK;
  std::string_view ours = hooks->alpn_protocols();
  for (size_t i = 0; i < ours.size(); i += 1 + size_t(uint8_t(ours[i]))) {
    size_t len = uint8_t(ours[i]);
    for (unsigned j = 0; j < inlen; j += 1u + in[j]) {
      if (j + 1 + in[j] > inlen) break;
      if (in[j] == len && std::memcmp(in + j + 1, ours.data() + i + 1, len) == 0) {
        *out = in + j + 1;
        *outlen = in[j];
        return SSL_TLSEXT_ERR_OK;
      }
    }
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

// A stable id for the sessions of these certificates, so that two servers
// (or two machines with the same ticket keys) agree on what may resume.
void set_session_id_context(SSL_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* h = EVP_MD_CTX_new();
  EVP_DigestInit_ex(h, EVP_sha256(), nullptr);
  for (int rc = SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_FIRST); rc == 1;
       rc = SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_NEXT)) {
    X509* x = SSL_CTX_get0_certificate(ctx);
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    if (x && X509_digest(x, EVP_sha256(), d, &dl) == 1) EVP_DigestUpdate(h, d, dl);
  }
  EVP_DigestFinal_ex(h, md, &len);
  EVP_MD_CTX_free(h);
  SSL_CTX_set_session_id_context(ctx, md, std::min<unsigned>(len, SSL_MAX_SID_CTX_LENGTH));
}

// ssl_certificate with variables: the pairs for the client's server name,
// read at the handshake (kept by DynamicCertificates with ssl_certificate_cache).
int on_certificate(SSL* ssl, void* arg) {
  auto* dynamic = static_cast<DynamicCertificates*>(arg);
  const char* sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  std::string name = sni ? sni : "";
  for (auto& c : name)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  while (!name.empty() && name.back() == '.') name.pop_back();
  return dynamic->apply(ssl, name) ? 1 : 0;
}

Status load_certificates(SSL_CTX* ctx, const config::SslServerConfig& s, LoadedCertificates& loaded,
                         std::shared_ptr<DynamicCertificates>& dynamic) {
  if (s.certificate_keys.size() < s.certificates.size()) {
    const auto& cert = s.certificates[s.certificate_keys.size()];
    return make_error(cert.where + "no \"ssl_certificate_key\" is defined for certificate " + q(cert.path));
  }
  if (config::certificates_have_variables(s)) {
    dynamic = std::make_shared<DynamicCertificates>(s);
    SSL_CTX_set_cert_cb(ctx, on_certificate, dynamic.get());
    return Ok{};
  }
  for (size_t i = 0; i < s.certificates.size(); ++i) {
    const auto& cert = s.certificates[i];
    const auto& key = s.certificate_keys[i];
    auto pair = load_certified_key(cert.path, key.path, s.passwords.get());
    if (!pair) return make_error((pair.error().find("certificate key") != std::string::npos ? key : cert).where +
                                 pair.error());
    ERR_clear_error();
    if (SSL_CTX_use_cert_and_key(ctx, (*pair)->cert, (*pair)->key, (*pair)->chain, 1) != 1) {
      return make_error(cert.where + "cannot load certificate " + q(cert.path) + ": " + take_ssl_errors());
    }
    loaded.emplace_back((*pair)->cert, cert.path);  // the context holds its own reference
  }
  return Ok{};
}

Status load_dhparam(SSL_CTX* ctx, const config::SslFile& f) {
  BIO* bio = BIO_new_file(f.path.c_str(), "r");
  if (!bio) return make_error(f.where + "BIO_new_file(" + q(f.path) + ") failed: " + take_ssl_errors());
  EVP_PKEY* dh = PEM_read_bio_Parameters(bio, nullptr);
  BIO_free(bio);
  if (!dh) return make_error(f.where + "PEM_read_bio_Parameters(" + q(f.path) + ") failed: " + take_ssl_errors());
  if (SSL_CTX_set0_tmp_dh_pkey(ctx, dh) != 1) {
    EVP_PKEY_free(dh);
    return make_error(f.where + "SSL_CTX_set0_tmp_dh_pkey(" + q(f.path) + ") failed: " + take_ssl_errors());
  }
  return Ok{};
}

}  // namespace

Status apply_conf_commands(SSL_CTX* ctx, const std::vector<std::pair<std::string, std::string>>& commands,
                           bool server, const std::string& where) {
  if (commands.empty()) return Ok{};
  SSL_CONF_CTX* cctx = SSL_CONF_CTX_new();
  SSL_CONF_CTX_set_flags(cctx, SSL_CONF_FLAG_FILE | (server ? SSL_CONF_FLAG_SERVER : SSL_CONF_FLAG_CLIENT) |
                                   SSL_CONF_FLAG_CERTIFICATE | SSL_CONF_FLAG_SHOW_ERRORS);
  SSL_CONF_CTX_set_ssl_ctx(cctx, ctx);
  for (const auto& [name, value] : commands) {
    if (SSL_CONF_cmd(cctx, name.c_str(), value.c_str()) <= 0) {
      SSL_CONF_CTX_free(cctx);
      return make_error(where + "SSL_CONF_cmd(" + q(name) + ", " + q(value) + ") failed: " + take_ssl_errors());
    }
  }
  SSL_CONF_CTX_finish(cctx);
  SSL_CONF_CTX_free(cctx);
  return Ok{};
}

Status set_tls_protocols(SSL_CTX* ctx, uint8_t bits, std::string_view directive) {
  struct Version {
    uint8_t bit;
    int version;
    uint64_t no_op;
  };
  static constexpr Version kVersions[] = {
      {config::kSslV3, SSL3_VERSION, SSL_OP_NO_SSLv3},       {config::kTlsV1, TLS1_VERSION, SSL_OP_NO_TLSv1},
      {config::kTlsV11, TLS1_1_VERSION, SSL_OP_NO_TLSv1_1}, {config::kTlsV12, TLS1_2_VERSION, SSL_OP_NO_TLSv1_2},
      {config::kTlsV13, TLS1_3_VERSION, SSL_OP_NO_TLSv1_3},
  };
  int lo = 0, hi = 0;
  uint64_t no = 0;
  for (const auto& v : kVersions) {
    if (bits & v.bit) {
      if (!lo) lo = v.version;
      hi = v.version;
    } else {
      no |= v.no_op;
    }
  }
  if (!lo) return make_error("no protocol enabled in " + q(directive));
  SSL_CTX_set_min_proto_version(ctx, lo);
  SSL_CTX_set_max_proto_version(ctx, hi);
  SSL_CTX_set_options(ctx, no);  // holes between the two ends
  return Ok{};
}

std::string take_ssl_errors() {
  std::string out;
  char buf[256];
  while (unsigned long e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  if (out.empty()) out = "unknown error";
  return out;
}

Result<std::shared_ptr<SSL_CTX>> build_tls_context(const config::SslServerConfig& s) {
  ERR_clear_error();
  SSL_CTX* raw = SSL_CTX_new(TLS_server_method());
  if (!raw) return make_error(s.where + "SSL_CTX_new() failed: " + take_ssl_errors());
  CtxDeleter deleter;
  std::shared_ptr<SSL_CTX> ctx(raw, deleter);

  // Renegotiation off (a client-driven CPU sink), no compression (CRIME),
  // an unclean close is an end of stream, not an error.
  SSL_CTX_set_options(raw, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF);
  // Application writes never wait on the socket (TlsTransport's BIO gathers
  // them); the two write modes only keep a handshake write's retry lenient.
  // No SSL_MODE_RELEASE_BUFFERS: it frees the ~17 KB record buffers after
  // every read and write that empties them, so a connection with one
  // request at a time paid a large malloc and free each way per request.
  // The connections give them back once quiet for a while instead
  // (Transport::release_idle_buffers); stream sessions set the mode.
  SSL_CTX_set_mode(raw, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_read_ahead(raw, 1);  // take whole socket reads, not record headers then bodies

  auto st = set_tls_protocols(raw, s.protocols, "ssl_protocols");
  if (!st) return make_error(s.where + st.error());
  if (SSL_CTX_set_cipher_list(raw, s.ciphers.c_str()) != 1) {
    return make_error(s.where + "SSL_CTX_set_cipher_list(" + q(s.ciphers) + ") failed: " + take_ssl_errors());
  }
  if (s.prefer_server_ciphers) SSL_CTX_set_options(raw, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (s.ecdh_curve != "auto" && SSL_CTX_set1_groups_list(raw, s.ecdh_curve.c_str()) != 1) {
    return make_error(s.where + "SSL_CTX_set1_groups_list(" + q(s.ecdh_curve) + ") failed: " + take_ssl_errors());
  }

  LoadedCertificates loaded;
  std::shared_ptr<DynamicCertificates> dynamic;
  st = load_certificates(raw, s, loaded, dynamic);
  if (!st) return Error{st.error()};
  std::get_deleter<CtxDeleter>(ctx)->dynamic = std::move(dynamic);
  st = configure_client_verification(raw, s);
  if (!st) return Error{st.error()};
  auto stapling = configure_ocsp_stapling(raw, s, loaded);
  if (!stapling) return Error{stapling.error()};
  std::get_deleter<CtxDeleter>(ctx)->stapling = std::move(*stapling);
  if (!s.dhparam.path.empty()) {
    st = load_dhparam(raw, s.dhparam);
    if (!st) return Error{st.error()};
  }

  set_session_id_context(raw);
  using SC = config::SslServerConfig::SessionCache;
  if (s.session_cache == SC::shared) {
    // Outside the context: it outlives a reload (see session_store.h).
    auto store = SessionStore::named(s.session_cache_name, size_t(std::max<int64_t>(s.session_cache_size, 1)));
    store->attach(raw);
    std::get_deleter<CtxDeleter>(ctx)->store = std::move(store);
  } else if (s.session_cache == SC::builtin) {
    SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(raw, s.session_cache_size > 0 ? long(s.session_cache_size) : 20480);
  } else {
    SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_OFF);
  }
  SSL_CTX_set_timeout(raw, long(s.session_timeout_s));
  if (!s.session_tickets) {
    SSL_CTX_set_options(raw, SSL_OP_NO_TICKET);
    // TLS 1.3 resumes only by tickets: without a cache there is nothing to send.
    if (s.session_cache != SC::builtin && s.session_cache != SC::shared) SSL_CTX_set_num_tickets(raw, 0);
  } else {
    // Two after a full handshake (a client may open two connections at
    // once), one more with every resumption (the callback or OpenSSL
    // renews it): clients that use a ticket once never run dry.
    SSL_CTX_set_num_tickets(raw, 2);
    std::shared_ptr<TicketKeys> keys;
    if (!s.ticket_key_files.empty()) {
      auto loaded = load_ticket_keys(s);
      if (!loaded) return Error{loaded.error()};
      keys = *loaded;
    } else if (s.session_cache == SC::shared) {
      keys = cache_ticket_keys(s.session_cache_name);
      if (!keys) return make_error(s.where + "RAND_bytes() failed: " + take_ssl_errors());
    }
    if (keys) {
      SSL_CTX_set_ex_data(raw, ticket_keys_index(), keys.get());
      std::get_deleter<CtxDeleter>(ctx)->keys = std::move(keys);
      if (SSL_CTX_set_tlsext_ticket_key_evp_cb(raw, ticket_callback) != 1) {
        return make_error(s.where + "SSL_CTX_set_tlsext_ticket_key_evp_cb() failed: " + take_ssl_errors());
      }
    }
  }
  if (s.early_data) {
    SSL_CTX_set_max_early_data(raw, 16 * 1024);
    // OpenSSL's own anti-replay makes every ticket single-use and stateful
    // (kept in this process's cache), which would break resumption with
    // shared ticket keys across machines. Tickets stay reusable; the early
    // data of each is accepted once in this process (TlsReplayGuard), and
    // what is not idempotent is answered 425 in early data anyway.
    SSL_CTX_set_options(raw, SSL_OP_NO_ANTI_REPLAY);
    SSL_CTX_set_allow_early_data_cb(raw, allow_early_data, nullptr);
  }
  SSL_CTX_set_max_send_fragment(raw, s.buffer_size < 512 ? 512 : s.buffer_size);

  SSL_CTX_set_tlsext_servername_callback(raw, on_server_name);
  SSL_CTX_set_alpn_select_cb(raw, on_alpn, nullptr);

  st = apply_conf_commands(raw, s.conf_commands, true, s.where);
  if (!st) return Error{st.error()};
  return ctx;
}

}  // namespace torii::net
