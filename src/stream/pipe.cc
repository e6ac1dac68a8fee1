#include "stream/pipe.h"

#include <sys/socket.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace torii::stream {

void Pipe::preload(std::string_view bytes) {
  if (!buf_) buf_ = std::make_unique_for_overwrite<char[]>(capacity_);
  const size_t n = std::min(bytes.size(), capacity_ - end_);
  std::memcpy(buf_.get() + end_, bytes.data(), n);
  end_ += n;
}

Pipe::Io Pipe::fill(int fd) {
  if (eof_) return Io::eof;
  if (begin_ == end_) begin_ = end_ = 0;
  if (end_ == capacity_ && begin_ > 0) {
    std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == capacity_) return Io::blocked;
  if (!buf_) buf_ = std::make_unique_for_overwrite<char[]>(capacity_);
  for (;;) {
    const ssize_t n = ::recv(fd, buf_.get() + end_, capacity_ - end_, 0);
    if (n > 0) {
      end_ += size_t(n);
      read_ += uint64_t(n);
      return Io::progress;
    }
    if (n == 0) {
      eof_ = true;
      return Io::eof;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Io::blocked;
    errno_ = errno;
    eof_ = true;  // as nginx: a read error ends this direction
    return Io::error;
  }
}

Pipe::Io Pipe::drain(int fd) {
  if (begin_ == end_) return Io::blocked;
  for (;;) {
    const ssize_t n = ::send(fd, buf_.get() + begin_, end_ - begin_, MSG_NOSIGNAL);
    if (n > 0) {
      begin_ += size_t(n);
      written_ += uint64_t(n);
      if (begin_ == end_) begin_ = end_ = 0;
      return Io::progress;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Io::blocked;
    errno_ = n < 0 ? errno : EPIPE;
    return Io::error;
  }
}

}  // namespace torii::stream
