// The ssl_* settings of one server (or of the http block, which servers
// inherit), and the TLS context built from them at load time. A server that
// changes nothing shares its parent's object, so servers with the same
// settings share one context and one session cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

typedef struct ssl_ctx_st SSL_CTX;
struct gnutls_certificate_credentials_st;

namespace torii::config {

struct Config;
struct Server;

// TLS protocol versions, as bits of SslServerConfig::protocols.
enum SslProtocol : uint8_t {
  kSslV2 = 1 << 0,
  kSslV3 = 1 << 1,
  kTlsV1 = 1 << 2,
  kTlsV11 = 1 << 3,
  kTlsV12 = 1 << 4,
  kTlsV13 = 1 << 5,
};

// A file named by a directive, with where the directive was written.
struct SslFile {
  std::string path;   // absolute
  std::string where;  // "FILE:LINE: "
};

// ssl_certificate_cache (and its upstream twins): how certificates named
// with variables are kept once read (net/certified_key.h).
struct CertificateCache {
  size_t max = 0;           // 0: off, nginx's default: read at every handshake
  int64_t inactive_s = 10;  // an entry unused this long goes
  int64_t valid_s = 60;     // then the files are checked again (reread if changed)
};

struct SslServerConfig {
  enum class SessionCache : uint8_t { off, none, builtin, shared };

  // Each a path, "data:PEM", or (with variables) a pattern rendered per
  // handshake for the SNI name ($ssl_server_name): see net/certified_key.
  std::vector<SslFile> certificates;      // each: certificate, then its chain
  std::vector<SslFile> certificate_keys;  // paired with certificates by position
  std::string conf_dir;                   // the main config file's folder, with a final '/'
  // Which block wrote the certificate lists: a child block that names its
  // own certificates replaces the inherited ones instead of adding to them.
  // ssl_password_file: tried in order for each encrypted key; null: none.
  std::shared_ptr<const std::vector<std::string>> passwords;
  CertificateCache certificate_cache;  // ssl_certificate_cache
  const void* certificates_owner = nullptr;
  const void* keys_owner = nullptr;
  const void* ticket_keys_owner = nullptr;
  const void* conf_commands_owner = nullptr;

  uint8_t protocols = kTlsV12 | kTlsV13;
  std::string ciphers = "HIGH:!aNULL:!MD5";
  bool prefer_server_ciphers = false;
  std::string ecdh_curve = "auto";
  SessionCache session_cache = SessionCache::none;
  int64_t session_cache_size = 0;  // bytes (shared) or sessions (builtin); 0: OpenSSL's default
  std::string session_cache_name;
  int64_t session_timeout_s = 300;
  bool session_tickets = true;
  std::vector<SslFile> ticket_key_files;  // the first one encrypts
  bool early_data = false;
  // ssl_reject_handshake: a handshake whose server name picks this server
  // (or that picks none, on the default server) gets an unrecognized_name
  // alert. Such a server needs no certificate.
  bool reject_handshake = false;
  // Client certificates (directives_client_cert.cc, net/client_cert.cc).
  enum class VerifyClient : uint8_t { off, on, optional, optional_no_ca };
  VerifyClient verify_client = VerifyClient::off;
  SslFile client_certificate;   // CAs to verify against, named in the request
  SslFile trusted_certificate;  // CAs to verify against, not named
  SslFile crl;
  int verify_depth = 1;
  SslFile dhparam;  // empty path: none
  // OCSP stapling (directives_ssl_stapling.cc, net/ocsp_stapling.cc).
  bool stapling = false;
  bool stapling_verify = false;
  SslFile stapling_file;           // a DER response to staple as is; empty: fetch one
  std::string stapling_responder;  // "http://host[:port]/path"; empty: the certificate's AIA
  std::vector<std::pair<std::string, std::string>> conf_commands;
  size_t buffer_size = 16 * 1024;  // largest TLS record we write
  bool ssl_on = false;             // deprecated "ssl on": every listen of the server is TLS
  std::string where;               // "FILE:LINE: " of the first ssl directive, for errors

  // Built at load by build_ssl_contexts(); shared by every worker thread.
  std::shared_ptr<SSL_CTX> ctx;
  // The same certificates for QUIC (GnuTLS), built only when some address
  // answers HTTP/3.
  std::shared_ptr<gnutls_certificate_credentials_st> quic_credentials;
  std::shared_ptr<const std::string> quic_ticket_key;  // null: no tickets over QUIC
};

// A certificate or key name has variables: every pair is then read at the
// handshake, for the client's server name, as nginx does.
bool certificates_have_variables(const SslServerConfig& s);

// Builds the TLS context of every server that has certificates or listens
// with "ssl" (net/tls_context.cc does the OpenSSL part). Fails naming the
// file and the directive when a certificate, key or parameter is bad.
// `warnings` gets nginx-style lines for what will not work as written
// (a protocol the context's security level refuses).
Status build_ssl_contexts(const std::vector<std::shared_ptr<Server>>& servers, Config& cfg,
                          std::vector<std::string>& warnings);

}  // namespace torii::config
