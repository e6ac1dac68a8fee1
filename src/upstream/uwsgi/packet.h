// The uwsgi request packet, as a pure transform: a 4-byte header
// (modifier1, the vars' size in 16 bits little-endian, modifier2) and the
// vars, each a 16-bit little-endian length and bytes for the key and the
// value. The request body follows the packet unframed; the application
// answers with an HTTP/1.x response (or a CGI-style head) and closes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace torii::upstream::uwsgi {

constexpr size_t kHeaderSize = 4;
constexpr size_t kMaxVars = 65535;  // the vars' size field is 16 bits

class PacketBuilder {
 public:
  explicit PacketBuilder(std::string& out) : out_(out), start_(out.size()) { out_.append(kHeaderSize, '\0'); }

  // False when the pair does not fit a 16-bit length (then nothing is added).
  bool add(std::string_view key, std::string_view value);
  // Bytes appended as they are (nginx's uwsgi_string), counted in the size.
  void add_raw(std::string_view bytes) { out_.append(bytes); }
  // Writes the header; false when the vars outgrew 64 KB.
  bool finish(uint8_t modifier1, uint8_t modifier2);

 private:
  std::string& out_;
  size_t start_;
};

// The inverse, for tests and the fuzzer: calls f(key, value) for each var
// of a whole packet; false when it is malformed.
template <typename F>
bool parse_packet(std::string_view in, uint8_t& modifier1, uint8_t& modifier2, size_t& consumed, F&& f) {
  if (in.size() < kHeaderSize) return false;
  auto u16 = [&](size_t at) { return size_t(uint8_t(in[at])) | size_t(uint8_t(in[at + 1])) << 8; };
  modifier1 = uint8_t(in[0]);
  modifier2 = uint8_t(in[3]);
  const size_t size = u16(1);
  if (in.size() < kHeaderSize + size) return false;
  size_t at = kHeaderSize;
  const size_t end = kHeaderSize + size;
  while (at < end) {
    if (end - at < 2) return false;
    const size_t klen = u16(at);
    at += 2;
    if (end - at < klen + 2) return false;
    std::string_view key = in.substr(at, klen);
    at += klen;
    const size_t vlen = u16(at);
    at += 2;
    if (end - at < vlen) return false;
    f(key, in.substr(at, vlen));
    at += vlen;
  }
  consumed = end;
  return true;
}

}  // namespace torii::upstream::uwsgi
