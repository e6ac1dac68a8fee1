#include "stream/tls_server.h"

#include <openssl/err.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "config/ssl_config.h"
#include "net/client_cert.h"
#include "net/tls_context.h"
#include "net/tls_details.h"
#include "stream/variables.h"

namespace torii::stream {

std::unique_ptr<TlsServerEndpoint> TlsServerEndpoint::start(SSL_CTX* ctx, int fd, std::string_view alpn,
                                                            std::string& error) {
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx);
  if (!ssl || SSL_set_fd(ssl, fd) != 1) {
    if (ssl) SSL_free(ssl);
    error = "SSL_new() failed (SSL: " + net::take_ssl_errors() + ")";
    return nullptr;
  }
  SSL_set_accept_state(ssl);
  // A relay may sit quiet for hours: its record buffers go back after each
  // read and write that empties them.
  SSL_set_mode(ssl, SSL_MODE_RELEASE_BUFFERS);
  std::unique_ptr<TlsServerEndpoint> e(new TlsServerEndpoint(ssl, fd, alpn));
  // The context's ALPN callback asks the hooks; without them it selects nothing.
  if (!alpn.empty()) SSL_set_app_data(ssl, static_cast<net::TlsHandshakeHooks*>(e.get()));
  return e;
}

TlsServerEndpoint::~TlsServerEndpoint() { SSL_free(ssl_); }

net::IoResult TlsServerEndpoint::failed(int ret, const char* op) {
  const int err = SSL_get_error(ssl_, ret);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return {net::IoStatus::again, 0};
  if (err == SSL_ERROR_ZERO_RETURN) return {net::IoStatus::eof, 0};
  broken_ = true;
  if (err == SSL_ERROR_SYSCALL) {
    const int e = errno;
    ERR_clear_error();
    if (ret == 0 || e == 0) {
      error_ = std::string(op) + " failed (peer closed connection)";
      return {net::IoStatus::eof, 0};
    }
    error_ = std::string(op) + " failed (" + std::to_string(e) + ": " + std::strerror(e) + ")";
    return {net::IoStatus::error, 0};
  }
  error_ = std::string(op) + " failed (SSL: " + net::take_ssl_errors() + ")";
  return {net::IoStatus::error, 0};
}

net::IoResult TlsServerEndpoint::handshake() {
  ERR_clear_error();
  const int ret = SSL_do_handshake(ssl_);
  if (ret == 1) return {net::IoStatus::ok, 0};
  net::IoResult r = failed(ret, "SSL_do_handshake()");
  if (r.status == net::IoStatus::eof) {
    // The client went away during the handshake: a failure, not an end.
    if (error_.empty()) error_ = "SSL_do_handshake() failed (peer closed connection)";
    broken_ = true;
    r.status = net::IoStatus::error;
  }
  return r;
}

std::string TlsServerEndpoint::check_client_certificate(const config::SslServerConfig& s) const {
  using V = config::SslServerConfig::VerifyClient;
  if (s.verify_client == V::off) return {};
  const long rc = SSL_get_verify_result(ssl_);
  if (rc != X509_V_OK && (s.verify_client != V::optional_no_ca || !net::verify_error_optional(rc)))
    return "client SSL certificate verify error: (" + std::to_string(rc) + ":" + X509_verify_cert_error_string(rc) + ")";
  if (s.verify_client == V::on) {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (!cert) return "client sent no required SSL certificate";
    X509_free(cert);
  }
  return {};
}

void TlsServerEndpoint::describe(Facts& f, bool client_ciphers) const {
  f.tls = true;
  f.ssl_protocol = SSL_get_version(ssl_);
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl_);
  f.ssl_cipher = cipher ? SSL_CIPHER_get_name(cipher) : "";
  const char* name = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
  f.ssl_server_name = name ? name : "";
  f.ssl_session_reused = SSL_session_reused(ssl_) == 1;
  net::append_openssl_session_id(ssl_, f.ssl_session_id);
  net::append_openssl_curve(ssl_, f.ssl_curve);
  net::append_openssl_curves(ssl_, f.ssl_curves);
  if (client_ciphers) net::append_openssl_ciphers(ssl_, f.ssl_ciphers);
  f.client_cert = net::read_client_cert(ssl_);
  const unsigned char* alpn = nullptr;
  unsigned alpn_len = 0;
  SSL_get0_alpn_selected(ssl_, &alpn, &alpn_len);
  if (alpn) f.ssl_alpn_protocol.assign(reinterpret_cast<const char*>(alpn), alpn_len);
}

net::IoResult TlsServerEndpoint::read(char* buf, size_t len) {
  ERR_clear_error();
  size_t n = 0;
  if (SSL_read_ex(ssl_, buf, len, &n) == 1) return {net::IoStatus::ok, n};
  return failed(0, "SSL_read()");
}

net::IoResult TlsServerEndpoint::write(const char* data, size_t len) {
  if (len == 0) return {net::IoStatus::ok, 0};
  ERR_clear_error();
  size_t n = 0;
  if (SSL_write_ex(ssl_, data, len, &n) == 1) return {net::IoStatus::ok, n};
  net::IoResult r = failed(0, "SSL_write()");
  if (r.status == net::IoStatus::eof) r.status = net::IoStatus::error;
  return r;
}

void TlsServerEndpoint::shutdown_write() {
  close_notify();
  ::shutdown(fd_, SHUT_WR);
}

void TlsServerEndpoint::close_notify() {
  if (broken_ || !SSL_is_init_finished(ssl_)) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // one try on a non-blocking socket: never waits
  ERR_clear_error();
  broken_ = true;  // once
}

}  // namespace torii::stream
