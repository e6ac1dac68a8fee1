// The mp4 module (nginx's ngx_http_mp4_module): in a location with `mp4`,
// GET or HEAD of a file with ?start=S and/or ?end=E (seconds, decimals
// allowed, milliseconds kept) answers a valid MP4 of that part
// (modules/mp4/trimmer); without them the file as it is. A file it cannot
// cut is a 500 with nginx's error log line. A URI ending in '/' or naming
// a directory goes on to the static handler, as nginx's handler declines.
#pragma once

#include <cstdint>
#include <string_view>

#include "handlers/static_file.h"

namespace torii::http {
class Exchange;
}

namespace torii::mp4 {

handlers::HandlerResult serve(http::Exchange& ex);

// nginx's ngx_http_mp4_atofp(value, 3): seconds as milliseconds, digits
// past the third decimal ignored; -1 for anything else.
int64_t parse_seconds_ms(std::string_view value);

}  // namespace torii::mp4
