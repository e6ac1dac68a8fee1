// The flv module (nginx's ngx_http_flv_module): in a location with `flv`,
// GET or HEAD of a file with ?start=N (a byte offset inside the file)
// answers the 13-byte FLV header followed by the file from byte N, so a
// Flash player can seek; without start (or start=0, or a start that is
// not a number below the file's size) the file as it is. A URI ending in
// '/' or naming a directory goes on to the static handler, as nginx's
// handler declines them.
#pragma once

#include <cstdint>
#include <string_view>

#include "handlers/static_file.h"

namespace torii::http {
class Exchange;
}

namespace torii::flv {

handlers::HandlerResult serve(http::Exchange& ex);

// nginx's ngx_atoof for ?start: digits only; -1 for anything else.
int64_t parse_offset(std::string_view value);

}  // namespace torii::flv
