// FastCGI framing (the FastCGI 1.0 specification), as a pure transform: the
// encoder appends records to a string, the decoder takes the application's
// records as they arrive and reports their content, with no socket and no
// timer. torii is a web server speaking to one application per connection,
// so every request has id 1 and the "responder" role.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace torii::upstream::fastcgi {

enum class RecordType : uint8_t {
  begin_request = 1,
  abort_request = 2,
  end_request = 3,
  params = 4,
  stdin_ = 5,
  stdout_ = 6,
  stderr_ = 7,
  data = 8,
  get_values = 9,
  get_values_result = 10,
  unknown_type = 11,
};

constexpr size_t kHeaderSize = 8;
constexpr size_t kMaxContent = 65535;  // a record's content length is 16 bits
constexpr uint16_t kRequestId = 1;

// One record header announcing `content` bytes (no padding).
void append_header(std::string& out, RecordType type, size_t content);
// BEGIN_REQUEST, role responder; keep_conn asks the application to keep the
// connection open after the request (fastcgi_keep_conn).
void append_begin_request(std::string& out, bool keep_conn);
// One name-value pair in the PARAMS encoding (1- or 4-byte lengths); it goes
// into a PARAMS stream's content, not a record of its own.
void append_name_value(std::string& out, std::string_view name, std::string_view value);
// `content` as records of `type`, each at most kMaxContent bytes; nothing for
// an empty `content` (an empty record ends a stream: append_end_of_stream).
void append_stream(std::string& out, RecordType type, std::string_view content);
void append_end_of_stream(std::string& out, RecordType type);

// What the decoder reports; content views point into the caller's input and
// live only for the call.
class DecoderEvents {
 public:
  virtual void on_stdout(std::string_view data) = 0;
  // A piece of a STDERR record; `record_end` once the record is complete.
  virtual void on_stderr(std::string_view data, bool record_end) = 0;
  virtual ~DecoderEvents() = default;
};

class Decoder {
 public:
  enum class Status : uint8_t { more, done, error };

  // Consumes records from `in`; stops after END_REQUEST (done: `consumed`
  // ends there, bytes after it are not the request's) or at a protocol
  // error (error() says which, as nginx's log line does).
  Status feed(std::string_view in, size_t& consumed, DecoderEvents& events);
  const char* error() const { return error_; }
  bool ended() const { return state_ == State::ended; }
  uint32_t app_status() const { return app_status_; }
  void reset() { *this = Decoder(); }

 private:
  enum class State : uint8_t { header, content, padding, ended, failed };
  Status fail(const char* why) {
    error_ = why;
    state_ = State::failed;
    return Status::error;
  }

  State state_ = State::header;
  uint8_t header_[kHeaderSize] = {};
  size_t header_have_ = 0;
  RecordType type_ = RecordType::stdout_;
  size_t content_left_ = 0;
  size_t padding_left_ = 0;
  uint8_t end_body_[8] = {};  // END_REQUEST's body, gathered across reads
  size_t end_have_ = 0;
  uint32_t app_status_ = 0;
  const char* error_ = "";
};

}  // namespace torii::upstream::fastcgi
