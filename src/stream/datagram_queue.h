// One direction of a UDP session's datagrams that the socket could not
// take yet. When a send meets a full send buffer (EAGAIN) the datagram
// waits here, and those after it too (their order kept), until the
// socket is writable again, as nginx's stream proxy keeps them in that
// direction's proxy_buffer_size buffer and waits for the write event; a
// datagram that would take the queue past `capacity` bytes is dropped.
// No socket of its own: the session gives the function that sends one
// datagram, so it is tested over any socket.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <string_view>

namespace torii::stream {

class DatagramQueue {
 public:
  // Sends one datagram: what was sent, or -1 with errno set.
  using Send = std::function<ssize_t(std::string_view)>;
  enum class Outcome : uint8_t {
    sent,     // nothing waits
    waiting,  // some wait for the socket to be writable
    dropped,  // the datagram did not fit (or the kernel had no buffer: ENOBUFS)
    failed    // an error other than EAGAIN, in errno; the session ends
  };

  explicit DatagramQueue(size_t capacity) : capacity_(capacity) {}

  // Sends `datagram` at once when nothing waits, else queues it.
  Outcome push(std::string_view datagram, const Send& send);
  // The socket is writable: what waits goes, in order, until it blocks again.
  Outcome flush(const Send& send);

  bool empty() const { return waiting_.empty(); }
  size_t bytes() const { return bytes_; }

 private:
  size_t capacity_;
  size_t bytes_ = 0;
  std::deque<std::string> waiting_;
};

}  // namespace torii::stream
