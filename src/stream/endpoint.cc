#include "stream/endpoint.h"

#include <sys/socket.h>

#include <cerrno>

namespace torii::stream {

net::IoResult PlainEndpoint::read(char* buf, size_t len) {
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, len, 0);
    if (n > 0) return {net::IoStatus::ok, size_t(n), size_t(n) < len};
    if (n == 0) return {net::IoStatus::eof, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {net::IoStatus::again, 0, true};
    return {net::IoStatus::error, 0};
  }
}

net::IoResult PlainEndpoint::write(const char* data, size_t len) {
  for (;;) {
    const ssize_t n = ::send(fd_, data, len, MSG_NOSIGNAL);
    if (n >= 0) return {net::IoStatus::ok, size_t(n)};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {net::IoStatus::again, 0};
    return {net::IoStatus::error, 0};
  }
}

void PlainEndpoint::shutdown_write() { ::shutdown(fd_, SHUT_WR); }

void UpstreamTlsEndpoint::shutdown_write() {
  tls_->close_notify();
  ::shutdown(fd_, SHUT_WR);
}

}  // namespace torii::stream
