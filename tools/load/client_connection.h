// What the worker drives, whatever the transport: a TCP connection
// (Connection: HTTP/1.1 or HTTP/2 over plain TCP or TLS) or a QUIC one
// (QuicConnection: HTTP/3 over its own UDP socket). A few calls, the same
// for both, so the worker's loop, its request source and its bookkeeping
// do not know which protocol runs underneath.
#pragma once

#include <cstdint>

namespace torii::load {

class ClientConnection {
 public:
  virtual ~ClientConnection() = default;

  // Connects with no request waiting (the warm-up before a run).
  virtual void connect_now(int64_t now_ns) = 0;
  // Still connecting or in the handshake.
  virtual bool connecting() const = 0;
  // How many requests it takes now.
  virtual unsigned capacity() const = 0;
  virtual void start_request(int64_t from_ns, int64_t now_ns) = 0;
  // Writes what waits to be sent, until done or the socket is full.
  virtual void flush() = 0;
  virtual void on_io(uint32_t events) = 0;
  // Fails what has waited longer than --timeout.
  virtual void check_timeout(int64_t now_ns) = 0;
  // The run is over: close, abandoning what is in flight.
  virtual void abandon() = 0;
  // A timer of its own (QUIC: loss recovery, acknowledgements, pacing, idle):
  // when it is due (INT64_MAX: none), and what to do then.
  virtual int64_t deadline() const { return INT64_MAX; }
  virtual void on_deadline(int64_t /*now_ns*/) {}

  // A new loop turn began: a connect that failed at once may be tried again.
  void next_turn() { wait_turn_ = false; }

  // The host's bookkeeping.
  bool in_ready = false;
  bool in_flush = false;
  bool in_later = false;

 protected:
  bool wait_turn_ = false;  // after a connect that failed at once
};

}  // namespace torii::load
