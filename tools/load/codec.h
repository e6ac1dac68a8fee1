// The protocol side of one connection, as a pure transform: requests go in
// (submit), bytes come out (produce), response bytes go in (receive) and
// outcomes come out through a RequestSink. No socket, no timer: the
// Connection around it owns the I/O.
#pragma once

#include <cstddef>
#include <cstdint>

#include "load/stats.h"

namespace torii::load {

// Where a codec reports what became of each request. `from_ns` is the time
// the request's latency counts from, handed in with submit().
class RequestSink {
 public:
  virtual void completed(int64_t from_ns, int status) = 0;
  virtual void failed(int64_t from_ns, ErrorKind kind, const char* why) = 0;
  // The server refused the request before processing it (HTTP/2
  // REFUSED_STREAM or a GOAWAY below it; HTTP/1.1 requests pipelined behind
  // a response that closed the connection): safe to send again.
  virtual void retry(int64_t from_ns) = 0;

 protected:
  ~RequestSink() = default;
};

class Codec {
 public:
  virtual ~Codec() = default;
  // A new connection is open; the previous one's state is gone. False: the
  // codec could not start (out of memory).
  virtual bool start() = 0;
  // How many more requests it takes now.
  virtual unsigned capacity() const = 0;
  virtual void submit(int64_t from_ns, int64_t sent_ns) = 0;
  // Bytes to write, at most `cap`; 0 when there is nothing to write now.
  virtual size_t produce(char* out, size_t cap) = 0;
  // Bytes read. False: the connection is unusable (its outstanding requests
  // have been reported failed).
  virtual bool receive(const char* data, size_t len) = 0;
  // The connection ended (eof: closed by the peer, else `kind`): every
  // outstanding request is reported, completed or failed.
  virtual void closed(bool eof, ErrorKind kind, const char* why) = 0;
  // Nothing more will happen on this connection: close it.
  virtual bool finished() const = 0;
  virtual size_t outstanding() const = 0;
  // When the oldest outstanding request was submitted (INT64_MAX: none).
  virtual int64_t oldest_sent() const = 0;
};

}  // namespace torii::load
