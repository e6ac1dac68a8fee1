// The request body of a multiplexed stream (HTTP/2, HTTP/3): bytes the
// client sent, held until the handler's reader takes them. Flow control is
// given back only as bytes are taken, so a handler that stops reading
// closes the client's window. client_max_body_size is judged as bytes
// come: 413 before the response has begun, a reset of the stream after.
// The codec's stream owns one and supplies the three things that differ by
// protocol (Owner).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace torii::http {

class BodyReader;
class Exchange;

class StreamBody {
 public:
  class Owner {
   public:
    virtual void acknowledge_body(size_t n) = 0;  // n bytes taken or dropped: window back to the client
    virtual void cancel_stream() = 0;             // reset the stream: its response has begun
    virtual bool stream_closed() const = 0;

   protected:
    ~Owner() = default;
  };

  explicit StreamBody(Owner& owner) : owner_(owner) {}

  // The request's head ended; `end_stream`: no body follows.
  void headers_done(bool end_stream) {
    remote_closed_ = end_stream;
    had_body_ = !end_stream;
  }
  void on_remote_end() { remote_closed_ = true; }
  bool remote_closed() const { return remote_closed_; }
  bool had_body() const { return had_body_; }
  // Something for deliver() to hand on (bytes, or the end of a body).
  bool deliverable() const { return !body_.empty() || (remote_closed_ && had_body_); }
  // The exchange finished without reading: bytes still held, or still owed.
  bool unread() const { return !reading_ && (!body_.empty() || !remote_closed_); }

  // Bytes from the client at `now_ms`; counted in the request's length.
  void on_data(std::string_view data, int64_t now_ms, Exchange* ex);
  // The handler's read_body. False when there is no body to wait for (the
  // reader has had on_body_end); true when deliver() should run.
  bool start_reading(BodyReader* reader, int64_t now_ms);
  // The handler's resume_body. True when a paused reader takes bytes again.
  bool resume(int64_t now_ms);
  // Hands held bytes to the reader, and the end once all came; or judges
  // the size, or drops what nobody will read.
  void deliver(Exchange& ex, const char* remote_addr);
  // Nobody will read the body: what is held and what comes is acknowledged
  // and dropped.
  void drop();
  // When the client's silence times the body out (client_body_timeout):
  // only while the client owes bytes to a reader that wants them.
  int64_t deadline(const Exchange& ex) const;
  // The stream closed: the bytes never taken (the codec returns them to
  // the connection's window); the reader is forgotten.
  size_t close();

 private:
  Owner& owner_;
  std::string body_;  // received, not yet taken by the reader
  int64_t received_ = 0;
  int64_t activity_ms_ = 0;  // the last bytes, or the reader started or resumed
  BodyReader* reader_ = nullptr;
  bool remote_closed_ = false;
  bool had_body_ = false;  // the head came without the end of the stream
  bool reading_ = false;   // the handler asked for the body
  bool paused_ = false;
  bool end_delivered_ = false;
  bool dropping_ = false;
};

}  // namespace torii::http
