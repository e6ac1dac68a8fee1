// Feeds arbitrary bytes to the Accept-Encoding parser and the choice of a
// coding; checks the invariants a response relies on: q-values stay in
// 0..1000 (or -1, not listed) and the chosen coding is one that was offered
// with a q-value above 0.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "modules/compression/accept_encoding.h"

using namespace torii::compression;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  AcceptEncoding ae = parse_accept_encoding(text);
  for (int q : {ae.gzip, ae.br, ae.zstd, ae.any})
    if (q < -1 || q > 1000) abort();
  Offer offer;
  offer.codings[0] = Coding::zstd;
  offer.codings[1] = Coding::br;
  offer.codings[2] = Coding::gzip;
  offer.count = 3;
  Coding c = choose(ae, offer);
  if (c != Coding::identity && ae.quality(c) <= 0) abort();
  return 0;
}
