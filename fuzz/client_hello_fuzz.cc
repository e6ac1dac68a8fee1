// Feeds arbitrary bytes to ssl_preread's ClientHello reader and checks
// what the session relies on: what it reports fits in what it was given,
// and a prefix of the input never gives another verdict than "more"
// or the whole input's (the session calls it again as bytes arrive).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "stream/client_hello.h"

using torii::stream::ClientHelloInfo;
using torii::stream::HelloResult;
using torii::stream::parse_client_hello;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  ClientHelloInfo whole;
  const HelloResult r = parse_client_hello(in, whole);
  if (r == HelloResult::done && (whole.server_name.size() > size || whole.alpn.size() > size)) abort();
  for (size_t cut : {size / 2, size ? size - 1 : 0}) {
    ClientHelloInfo part;
    const HelloResult p = parse_client_hello(in.substr(0, cut), part);
    if (p == HelloResult::need_more) continue;
    if (p != r) abort();
    if (p == HelloResult::done &&
        (part.server_name != whole.server_name || part.alpn != whole.alpn || part.protocol != whole.protocol))
      abort();
  }
  return 0;
}
