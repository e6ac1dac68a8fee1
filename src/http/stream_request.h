// The start of a request that came as a decoded field section on an
// HTTP/2 or HTTP/3 stream, the part both codecs share: the exchange is
// pinned to the config snapshot of the stream's listener (a reload
// mid-request leaves it there), its head is built from the fields, a bad
// head is answered with its status and logged, and a good one picks the
// server block by :authority/Host.
#pragma once

#include <memory>

#include "config/config.h"
#include "http/exchange.h"
#include "http/field_section.h"

namespace torii::http {

// `version`: 20 or 30. `had_body`: the stream did not end with its head.
// True: the head is good and the pipeline may run (the caller runs it).
bool prepare_stream_request(Exchange& ex, std::shared_ptr<const config::Config> config,
                            const config::ListenGroup& group, FieldSection& fields, int version, bool had_body);

}  // namespace torii::http
