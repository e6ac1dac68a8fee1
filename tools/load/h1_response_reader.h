// Reads HTTP/1.1 responses as a load generator needs them: the status, how
// the body is delimited, whether the connection stays open. The body is
// skipped as it streams past, never stored. A pure transform (bytes in, no
// socket): a head split across reads is kept in a buffer that grows once to
// the largest head seen, so steady-state reading does not allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace torii::load {

class H1ResponseReader {
 public:
  enum class State : uint8_t { head, body, done, error };

  explicit H1ResponseReader(size_t max_head = 64 * 1024) : max_head_(max_head) {}

  // Starts on the response to the next request; a HEAD response has no body.
  void begin(bool head_request);
  // Takes bytes of the response; returns how many it used (the rest belong to
  // the next response). Interim 1xx responses are passed over.
  size_t feed(const char* data, size_t len);
  // The connection was closed: completes a body delimited by the close.
  void on_eof();

  State state() const { return state_; }
  int status() const { return status_; }
  // The server will keep the connection open after this response.
  bool keep_alive() const { return keep_alive_; }
  const char* error() const { return error_; }
  // Bytes of this response have arrived (so a close is not a clean idle close).
  bool started() const { return started_; }

 private:
  enum class Framing : uint8_t { none, length, chunked, until_close };
  enum class Chunk : uint8_t { size, extension, data, data_end, trailer_start, trailer };

  size_t feed_head(const char* data, size_t len);
  bool parse_head(std::string_view head);
  size_t feed_body(const char* data, size_t len);
  size_t feed_chunked(const char* data, size_t len);
  void fail(const char* why) {
    state_ = State::error;
    error_ = why;
  }

  size_t max_head_;
  std::string stash_;  // a head not yet complete
  State state_ = State::head;
  Framing framing_ = Framing::none;
  Chunk chunk_ = Chunk::size;
  bool head_request_ = false;
  bool keep_alive_ = true;
  bool started_ = false;
  bool chunk_digits_ = false;
  int status_ = 0;
  uint64_t remaining_ = 0;  // of the body (length) or of the chunk
  const char* error_ = "";
};

}  // namespace torii::load
