// The SCGI request head, as a pure transform: a netstring ("LEN:" BYTES
// ",") whose bytes are NUL-terminated names and values, CONTENT_LENGTH
// first (the protocol asks for it there, nginx always sends it). The
// request body follows unframed; the application answers with a CGI-style
// head (or an HTTP/1.x status line) and closes the connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace torii::upstream::scgi {

class HeadBuilder {
 public:
  explicit HeadBuilder(int64_t content_length);
  void add(std::string_view name, std::string_view value);
  // Appends the whole netstring to `out`.
  void finish(std::string& out) const;

 private:
  std::string headers_;
};

// The inverse, for tests and the fuzzer: calls f(name, value) for each pair
// of a whole netstring; false when it is malformed (bad length, no ',', a
// name without its value).
template <typename F>
bool parse_head(std::string_view in, size_t& consumed, F&& f) {
  size_t len = 0, at = 0;
  while (at < in.size() && in[at] >= '0' && in[at] <= '9' && at < 10) len = len * 10 + size_t(in[at++] - '0');
  if (at == 0 || at >= in.size() || in[at] != ':') return false;
  ++at;
  if (in.size() - at < len + 1 || in[at + len] != ',') return false;
  std::string_view body = in.substr(at, len);
  consumed = at + len + 1;
  while (!body.empty()) {
    const size_t name_end = body.find('\0');
    if (name_end == std::string_view::npos) return false;
    const size_t value_end = body.find('\0', name_end + 1);
    if (value_end == std::string_view::npos) return false;
    f(body.substr(0, name_end), body.substr(name_end + 1, value_end - name_end - 1));
    body.remove_prefix(value_end + 1);
  }
  return true;
}

}  // namespace torii::upstream::scgi
