#include "stream/pipe.h"

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "stream/endpoint.h"

namespace torii::stream {

void Pipe::preload(std::string_view bytes) {
  if (!buf_) buf_ = std::make_unique_for_overwrite<char[]>(capacity_);
  const size_t n = std::min(bytes.size(), capacity_ - end_);
  std::memcpy(buf_.get() + end_, bytes.data(), n);
  end_ += n;
}

Pipe::Io Pipe::fill(Endpoint& from, size_t max) {
  if (eof_) return Io::eof;
  if (begin_ == end_) begin_ = end_ = 0;
  if (end_ == capacity_ && begin_ > 0) {
    std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == capacity_) return Io::blocked;
  if (!buf_) buf_ = std::make_unique_for_overwrite<char[]>(capacity_);
  const net::IoResult r = from.read(buf_.get() + end_, std::min(capacity_ - end_, max));
  switch (r.status) {
    case net::IoStatus::ok:
      end_ += r.bytes;
      read_ += r.bytes;
      return r.bytes ? Io::progress : Io::blocked;
    case net::IoStatus::again:
      return Io::blocked;
    case net::IoStatus::eof:
      eof_ = true;
      return Io::eof;
    case net::IoStatus::error:
      errno_ = errno ? errno : EPROTO;
      eof_ = true;  // as nginx: a read error ends this direction
      return Io::error;
  }
  return Io::blocked;
}

Pipe::Io Pipe::drain(Endpoint& to) {
  if (begin_ == end_) return Io::blocked;
  const net::IoResult r = to.write(buf_.get() + begin_, end_ - begin_);
  if (r.status == net::IoStatus::ok && r.bytes > 0) {
    begin_ += r.bytes;
    written_ += r.bytes;
    if (begin_ == end_) begin_ = end_ = 0;
    return Io::progress;
  }
  if (r.status == net::IoStatus::again) return Io::blocked;
  errno_ = errno ? errno : EPIPE;
  return Io::error;
}

}  // namespace torii::stream
