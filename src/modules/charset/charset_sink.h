// The charset filter's body side: recodes the body as it streams, between
// the exchange (or the filters before it) and the filters after it, over
// every codec. Files are read 64 KB at a time while the sink below holds
// less than 256 KB, so a large file never sits in memory whole.
#pragma once

#include <memory>

#include "http/response.h"
#include "modules/charset/recoder.h"

namespace torii::http {
class Exchange;
}

namespace torii::charset {

class CharsetSink;

std::shared_ptr<CharsetSink> make_sink(http::Exchange& ex, std::shared_ptr<const config::CharsetMap> map,
                                       Recoder::Direction direction);

// Puts `sink` in front of `filter_below` (the next body filter, or null)
// over `below` (the sink under the body filters). Returns the exchange's
// body filter.
std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<CharsetSink> sink,
                                           std::shared_ptr<http::ResponseSink> filter_below, http::ResponseSink& below);

}  // namespace torii::charset
