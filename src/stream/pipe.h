// One direction of a proxied TCP session: bytes read from one socket wait
// in a fixed buffer (proxy_buffer_size) until the other socket takes them.
// Reading stops while the buffer is full, so a slow reader holds back a
// fast writer instead of growing memory (back-pressure).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace torii::stream {

class Endpoint;

class Pipe {
 public:
  enum class Io : uint8_t { progress, blocked, eof, error };

  explicit Pipe(size_t capacity) : capacity_(capacity) {}

  // Bytes put in front of what is read (a PROXY protocol header, what
  // ssl_preread read); they must fit the buffer.
  void preload(std::string_view bytes);
  // Reads from `from` into the free space, at most `max` bytes (a rate
  // limit's allowance); `blocked` when the buffer is full or the socket empty.
  Io fill(Endpoint& from, size_t max = SIZE_MAX);
  // Bytes free for the next fill.
  size_t room() const { return capacity_ - (end_ - begin_); }
  // Writes to `to` what is held.
  Io drain(Endpoint& to);

  bool empty() const { return begin_ == end_; }
  bool full() const { return end_ == capacity_ && begin_ == 0; }
  bool eof() const { return eof_; }
  // The source ended and everything read has been passed on.
  bool done() const { return eof_ && empty(); }
  bool shut() const { return shut_; }
  void mark_shut() { shut_ = true; }
  int last_error() const { return errno_; }
  uint64_t read_total() const { return read_; }
  uint64_t written_total() const { return written_; }

 private:
  size_t capacity_;
  std::unique_ptr<char[]> buf_;  // made at the first read: an idle pipe holds none
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  bool shut_ = false;  // shutdown(SHUT_WR) sent to the destination
  int errno_ = 0;
  uint64_t read_ = 0, written_ = 0;
};

}  // namespace torii::stream
