#include "net/tls_client.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstring>

#include "net/tls_context.h"

namespace torii::net {

std::string tls_server_name(std::string_view name) {
  if (!name.empty() && name[0] == '[') {
    const size_t close = name.find(']');
    return std::string(close == std::string_view::npos ? name : name.substr(1, close - 1));
  }
  const size_t colon = name.find(':');
  if (colon != std::string_view::npos && name.find(':', colon + 1) == std::string_view::npos) name = name.substr(0, colon);
  return std::string(name);
}

namespace {

int client_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

bool is_ip_literal(const std::string& name) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, name.c_str(), buf) == 1 || inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

}  // namespace

void TlsSessionSlot::store(SSL_SESSION* s) {
  clear();
  session_ = s;
}

void TlsSessionSlot::clear() {
  if (session_) SSL_SESSION_free(session_);
  session_ = nullptr;
}

int TlsClient::on_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* self = static_cast<TlsClient*>(SSL_get_ex_data(ssl, client_index()));
  if (!self || !self->slot_ || !SSL_SESSION_is_resumable(session)) return 0;
  self->slot_->store(session);
  return 1;  // the slot owns it now
}

std::unique_ptr<TlsClient> TlsClient::start(SSL_CTX* ctx, int fd, const std::string& server_name,
                                            std::shared_ptr<TlsSessionSlot> slot, std::string& error,
                                            std::string_view alpn) {
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx);
  if (!ssl || SSL_set_fd(ssl, fd) != 1) {
    if (ssl) SSL_free(ssl);
    error = "SSL_new() failed (SSL: " + take_ssl_errors() + ")";
    return nullptr;
  }
  std::unique_ptr<TlsClient> c(new TlsClient(ssl, std::move(slot)));
  SSL_set_ex_data(ssl, client_index(), c.get());
  SSL_set_connect_state(ssl);
  // RFC 6066: no address literals in SNI.
  if (!server_name.empty() && !is_ip_literal(server_name) &&
      SSL_set_tlsext_host_name(ssl, server_name.c_str()) != 1) {
    error = "SSL_set_tlsext_host_name(\"" + server_name + "\") failed (SSL: " + take_ssl_errors() + ")";
    return nullptr;
  }
  if (!alpn.empty() &&
      SSL_set_alpn_protos(ssl, reinterpret_cast<const unsigned char*>(alpn.data()), unsigned(alpn.size())) != 0) {
    error = "SSL_set_alpn_protos() failed (SSL: " + take_ssl_errors() + ")";
    return nullptr;
  }
  if (c->slot_ && c->slot_->get()) SSL_set_session(ssl, c->slot_->get());
  return c;
}

TlsClient::~TlsClient() {
  SSL_set_ex_data(ssl_, client_index(), nullptr);
  // Not a failed session: OpenSSL would otherwise mark it unusable when
  // the connection goes without a close_notify exchange.
  SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_free(ssl_);
}

IoResult TlsClient::failed(int ret, const char* op) {
  const int err = SSL_get_error(ssl_, ret);
  if (err == SSL_ERROR_WANT_READ) {
    want_write_ = false;
    return {IoStatus::again, 0};
  }
  if (err == SSL_ERROR_WANT_WRITE) {
    want_write_ = true;
    return {IoStatus::again, 0};
  }
  if (err == SSL_ERROR_ZERO_RETURN) return {IoStatus::eof, 0};
  broken_ = true;
  if (err == SSL_ERROR_SYSCALL) {
    const int e = errno;
    ERR_clear_error();
    if (ret == 0 || e == 0) {
      error_ = std::string(op) + " failed (peer closed connection)";
      return {IoStatus::eof, 0};
    }
    error_ = std::string(op) + " failed (" + std::to_string(e) + ": " + std::strerror(e) + ")";
    errno = e;
    return {IoStatus::error, 0};
  }
  error_ = std::string(op) + " failed (SSL: " + take_ssl_errors() + ")";
  errno = EPROTO;
  return {IoStatus::error, 0};
}

IoResult TlsClient::handshake() {
  ERR_clear_error();
  const int ret = SSL_do_handshake(ssl_);
  if (ret == 1) {
    want_write_ = false;
    return {IoStatus::ok, 0};
  }
  IoResult r = failed(ret, "SSL_do_handshake()");
  if (r.status == IoStatus::eof) {
    // The server closed during the handshake: a failure, not an end.
    if (error_.empty()) error_ = "SSL_do_handshake() failed (peer closed connection)";
    r.status = IoStatus::error;
  }
  return r;
}

std::string TlsClient::verify(std::string_view name) const {
  const long rc = SSL_get_verify_result(ssl_);
  if (rc != X509_V_OK) {
    return "upstream SSL certificate verify error: (" + std::to_string(rc) + ":" +
           X509_verify_cert_error_string(rc) + ")";
  }
  X509* cert = SSL_get1_peer_certificate(ssl_);
  bool match = false;
  if (cert) {
    const std::string n(name);
    match = X509_check_host(cert, n.data(), n.size(), 0, nullptr) == 1 ||
            (is_ip_literal(n) && X509_check_ip_asc(cert, n.c_str(), 0) == 1);
    X509_free(cert);
  }
  if (!match) return "upstream SSL certificate does not match \"" + std::string(name) + "\"";
  return {};
}

IoResult TlsClient::read(char* buf, size_t len) {
  ERR_clear_error();
  size_t n = 0;
  const int ret = SSL_read_ex(ssl_, buf, len, &n);
  if (ret == 1) {
    want_write_ = false;
    return {IoStatus::ok, n};
  }
  return failed(ret, "SSL_read()");
}

IoResult TlsClient::write(const char* data, size_t len) {
  if (len == 0) return {IoStatus::ok, 0};
  ERR_clear_error();
  size_t n = 0;
  const int ret = SSL_write_ex(ssl_, data, len, &n);
  if (ret == 1) {
    want_write_ = false;
    return {IoStatus::ok, n};
  }
  IoResult r = failed(ret, "SSL_write()");
  if (r.status == IoStatus::eof) r.status = IoStatus::error;
  return r;
}

void TlsClient::close_notify() {
  if (broken_) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // one try on a non-blocking socket: never waits
  ERR_clear_error();
}

}  // namespace torii::net
