// One charset_map {} block (ngx_http_charset_module): how the bytes of one
// charset become another's. Either two one-byte charsets (a byte for a
// byte, both ways) or a one-byte charset and UTF-8 (a byte for a UTF-8
// sequence, and back by code point). Bytes below 0x80 map to themselves;
// a byte the block does not name becomes '?', as in nginx.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace torii::config {

struct CharsetMap {
  std::string from;  // a one-byte charset, as written
  std::string to;    // another one, or "utf-8"
  bool to_utf8 = false;
  // Both one-byte: byte of `from` -> byte of `to`, and back.
  std::array<uint8_t, 256> forward{};
  std::array<uint8_t, 256> backward{};
  // `to` is UTF-8: byte of `from` -> its UTF-8 bytes; a code point -> the
  // byte of `from` (a code point not named here has none).
  std::array<std::string, 256> forward_utf8;
  std::unordered_map<uint32_t, uint8_t> backward_utf8;
};

}  // namespace torii::config
