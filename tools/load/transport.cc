#include "load/transport.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace torii::load {

bool Transport::connect(const sockaddr_storage& address, socklen_t length) {
  close();
  fd_ = ::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    fail_errno(errno);
    return false;
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), length) != 0 && errno != EINPROGRESS) {
    fail_errno(errno);
    return false;
  }
  return true;
}

bool Transport::connect_finished() {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    fail_errno(err);
    return false;
  }
  return true;
}

bool Transport::start_tls(SSL_CTX* ctx, const char* server_name, TlsClient::SessionSlot* slot, bool resume) {
  ssl_ = SSL_new(ctx);
  if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) {
    std::snprintf(error_, sizeof error_, "%s", tls_error_text().c_str());
    return false;
  }
  if (server_name) SSL_set_tlsext_host_name(ssl_, server_name);
  SSL_set_app_data(ssl_, resume ? slot : nullptr);
  if (resume && slot->session) SSL_set_session(ssl_, slot->session);
  SSL_set_connect_state(ssl_);
  return true;
}

Transport::Io Transport::handshake() {
  ERR_clear_error();
  int rv = SSL_do_handshake(ssl_);
  if (rv == 1) return Io::done;
  return fail_tls(SSL_get_error(ssl_, rv));
}

std::string_view Transport::alpn() const {
  if (!ssl_) return {};
  const unsigned char* data = nullptr;
  unsigned len = 0;
  SSL_get0_alpn_selected(ssl_, &data, &len);
  return {reinterpret_cast<const char*>(data), len};
}

Transport::Io Transport::read(char* buf, size_t cap, size_t& n) {
  n = 0;
  if (!ssl_) {
    ssize_t r = ::recv(fd_, buf, cap, 0);
    if (r > 0) {
      n = size_t(r);
      return Io::done;
    }
    if (r == 0) return Io::eof;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Io::again;
    return fail_errno(errno);
  }
  ERR_clear_error();
  int r = SSL_read(ssl_, buf, int(cap > INT32_MAX ? INT32_MAX : cap));
  if (r > 0) {
    n = size_t(r);
    return Io::done;
  }
  return fail_tls(SSL_get_error(ssl_, r));
}

Transport::Io Transport::write(const char* data, size_t len, size_t& n) {
  n = 0;
  if (!ssl_) {
    ssize_t w = ::send(fd_, data, len, MSG_NOSIGNAL);
    if (w >= 0) {
      n = size_t(w);
      return Io::done;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Io::again;
    return fail_errno(errno);
  }
  ERR_clear_error();
  int w = SSL_write(ssl_, data, int(len > INT32_MAX ? INT32_MAX : len));
  if (w > 0) {
    n = size_t(w);
    return Io::done;
  }
  return fail_tls(SSL_get_error(ssl_, w));
}

Transport::Io Transport::fail_errno(int err) {
  std::snprintf(error_, sizeof error_, "%s", std::strerror(err));
  return Io::error;
}

Transport::Io Transport::fail_tls(int ssl_error) {
  switch (ssl_error) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      return Io::again;
    case SSL_ERROR_ZERO_RETURN:
      return Io::eof;
    case SSL_ERROR_SYSCALL: {
      int err = errno;
      if (ERR_peek_error() == 0) {
        // The socket ended under TLS: a reset, or a close without close_notify.
        if (err == 0 || err == EPIPE) return Io::eof;
        if (err == EAGAIN) return Io::again;
        return fail_errno(err);
      }
      [[fallthrough]];
    }
    default:
      std::snprintf(error_, sizeof error_, "%s", tls_error_text().c_str());
      return Io::error;
  }
}

void Transport::close(bool clean) {
  if (ssl_) {
    if (clean) {
      ERR_clear_error();
      SSL_shutdown(ssl_);  // one try, non-blocking: close_notify leaves or not
      ERR_clear_error();
    }
    SSL_free(ssl_);
    ssl_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace torii::load
