#include "net/transport.h"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace torii::net {

PlainTransport::~PlainTransport() {
  if (fd_ >= 0) close(fd_);  // also leaves the epoll set: the descriptor is never shared
}

IoResult PlainTransport::read(char* buf, size_t len) {
  while (true) {
    ssize_t n = recv(fd_, buf, len, 0);
    if (n > 0) return {IoStatus::ok, size_t(n), size_t(n) < len};
    if (n == 0) return {IoStatus::eof, 0};
    if (errno == EINTR) continue;
    return {errno == EAGAIN ? IoStatus::again : IoStatus::error, 0};
  }
}

IoResult PlainTransport::writev(const iovec* iov, int count, bool more) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = size_t(count);
  while (true) {
    ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
    if (n >= 0) return {IoStatus::ok, size_t(n)};
    if (errno == EINTR) continue;
    return {errno == EAGAIN ? IoStatus::again : IoStatus::error, 0};
  }
}

IoResult PlainTransport::sendfile(int file_fd, int64_t offset, size_t len) {
  off_t off = offset;
  while (true) {
    ssize_t n = ::sendfile(fd_, file_fd, &off, len);
    if (n > 0) return {IoStatus::ok, size_t(n)};
    if (n == 0) {
      errno = EIO;  // the file is shorter than it was: truncated under us
      return {IoStatus::error, 0};
    }
    if (errno == EINTR) continue;
    return {errno == EAGAIN ? IoStatus::again : IoStatus::error, 0};
  }
}

void PlainTransport::shutdown_write() { shutdown(fd_, SHUT_WR); }

}  // namespace torii::net
