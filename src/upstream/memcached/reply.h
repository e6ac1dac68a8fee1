// memcached's answer to "get KEY", as a pure transform (no socket, no
// config): the first line, then the value's bytes and "\r\nEND\r\n" after
// them. The rules and the error log's words are nginx's
// (ngx_http_memcached_module): "VALUE KEY FLAGS LENGTH" with the key as
// sent, or "END" for a miss; anything else is an invalid response.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace torii::upstream::memcached {

struct ReplyLine {
  enum class Kind : uint8_t { value, miss };
  Kind kind = Kind::miss;
  uint64_t flags = 0;  // read only when asked for (memcached_gzip_flag)
  int64_t length = 0;  // the value's bytes
  size_t size = 0;     // the line's bytes, CRLF included
};

enum class LineStatus : uint8_t { need_more, done, error };

// Parses the first line from `in` (the reply's bytes so far, from its
// first). `key` is the key as it was sent (escaped). nginx reads the
// flags field as a number only when memcached_gzip_flag is set
// (`read_flags`); otherwise any word passes. On error, `error` holds the
// line for the error log ("memcached sent invalid key in response ...").
LineStatus parse_reply_line(std::string_view in, std::string_view key, bool read_flags, ReplyLine& out,
                            std::string& error);

// The value's bytes and the trailer that must follow them.
class ValueReader {
 public:
  explicit ValueReader(int64_t length = 0) : left_(length) {}

  enum class Status : uint8_t {
    more,         // more value or trailer bytes are owed
    done,         // the value and its whole trailer came, nothing after them
    bad_trailer,  // the bytes after the value are not "\r\nEND\r\n" (or more came)
  };
  // Takes the next bytes of the reply: `value` is the part of `in` that
  // belongs to the value (a view into `in`, possibly empty).
  Status feed(std::string_view in, std::string_view& value);
  bool value_done() const { return left_ == 0; }

  static constexpr std::string_view kTrailer = "\r\nEND\r\n";

 private:
  int64_t left_;           // value bytes still owed
  size_t trailer_at_ = 0;  // trailer bytes matched so far
};

}  // namespace torii::upstream::memcached
