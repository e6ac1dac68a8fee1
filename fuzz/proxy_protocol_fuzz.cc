// Feeds arbitrary bytes to the PROXY protocol parser and checks what the
// connection relies on: a header never claims more bytes than it was
// given, a v1 header ends with CRLF, and asking again with a prefix of a
// complete header never says "done" with a different size.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "net/proxy_protocol.h"

using torii::net::parse_proxy_protocol;
using Kind = torii::net::ProxyProtocolResult::Kind;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto r = parse_proxy_protocol(in);
  if (r.kind == Kind::done) {
    if (r.size == 0 || r.size > in.size() || r.size > torii::net::kProxyProtocolMaxHeader) abort();
    if (in[0] == 'P' && (r.size < 2 || in.substr(r.size - 2, 2) != "\r\n")) abort();
    // The header alone parses to the same result.
    auto again = parse_proxy_protocol(in.substr(0, r.size));
    if (again.kind != Kind::done || again.size != r.size || again.addrs.has_value() != r.addrs.has_value()) abort();
    // Any shorter prefix is incomplete, never a different header.
    if (r.size > 1) {
      auto shorter = parse_proxy_protocol(in.substr(0, r.size - 1));
      if (shorter.kind == Kind::done) abort();
    }
  }
  if (r.kind == Kind::error && r.error.empty()) abort();
  return 0;
}
