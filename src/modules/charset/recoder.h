// The charset filter's recoding of a body (ngx_http_charset_module with a
// charset_map): a pure transform, bytes in and bytes out, that keeps its
// place across pieces (a UTF-8 sequence cut between two pieces is held
// until the next one completes it). nginx's rules:
// - one-byte to one-byte: each byte through the map's table;
// - one-byte to UTF-8: each byte to its sequence ('?' when unmapped);
// - UTF-8 to one-byte: each code point to its byte; one the map does not
//   name becomes a decimal character reference ("&#1046;"), an invalid
//   sequence '?'.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/charset_config.h"

namespace torii::charset {

class Recoder {
 public:
  enum class Direction { forward, backward };  // map.from -> map.to, or back

  Recoder(const config::CharsetMap& map, Direction direction) : map_(map), direction_(direction) {}

  // Whether the output length may differ from the input's (UTF-8 involved).
  bool changes_length() const { return map_.to_utf8; }

  // Appends to `out` the recoded bytes of `in` that are decided.
  void feed(std::string_view in, std::string& out);
  // The body ended: a sequence left incomplete is dropped (nginx's output).
  void finish(std::string& out);

 private:
  void from_utf8(std::string_view in, std::string& out);
  void put_code_point(uint32_t cp, std::string& out) const;

  const config::CharsetMap& map_;
  Direction direction_;
  std::string held_;  // the start of a UTF-8 sequence the next piece completes
};

}  // namespace torii::charset
