#include "stream/datagram_queue.h"

#include <cerrno>

namespace torii::stream {

namespace {

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

}  // namespace

DatagramQueue::Outcome DatagramQueue::push(std::string_view datagram, const Send& send) {
  if (waiting_.empty()) {
    if (send(datagram) >= 0) return Outcome::sent;
    if (errno == ENOBUFS) return Outcome::dropped;
    if (!would_block(errno)) return Outcome::failed;
  }
  if (bytes_ + datagram.size() > capacity_) return Outcome::dropped;
  waiting_.emplace_back(datagram);
  bytes_ += datagram.size();
  return Outcome::waiting;
}

DatagramQueue::Outcome DatagramQueue::flush(const Send& send) {
  while (!waiting_.empty()) {
    if (send(waiting_.front()) < 0) {
      if (would_block(errno)) return Outcome::waiting;
      if (errno != ENOBUFS) return Outcome::failed;
    }
    bytes_ -= waiting_.front().size();
    waiting_.pop_front();
  }
  return Outcome::sent;
}

}  // namespace torii::stream
