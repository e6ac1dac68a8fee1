// The SSI module (nginx's ngx_http_ssi_module): a header filter that
// decides whether a response is parsed for SSI commands, and a body filter
// that runs them as the body streams through (parser.h), with includes as
// subrequests (subrequest.h) whose responses go into the page in order
// (ordered_output.h).
//
// nginx's rules: `ssi on`; any status; not an empty body (a known length
// of 0); a type in ssi_types (text/html by default, "*" for any). The
// client's response then loses its Content-Length and Accept-Ranges, and
// its Last-Modified and ETag unless ssi_last_modified is on (the ETag then
// turns weak). An include's response is parsed when its own location has
// `ssi on`; a page and its includes share their SSI variables and blocks.
#pragma once

#include <memory>
#include <string_view>

#include "http/response.h"

namespace torii::http {
class Exchange;
}
namespace torii::config {
struct LocationSettings;
}

namespace torii::ssi {

class SsiSink;

// True when the SSI or addition filter will rewrite a client's 200 of
// `content_type` here: the handler then answers a Range with the whole
// body, as nginx's range filter, which runs after them, finds ranges
// turned off.
bool rewrites_body(const config::LocationSettings& s, std::string_view content_type);

// Runs the header filter on `head` (which it may change). Returns the body
// filter when the body is to be parsed, else null.
std::shared_ptr<SsiSink> header_filter(http::Exchange& ex, http::ResponseHead& head);

// Puts `ssi` in front of `filter_below` (the compression filter, or null)
// over `below` (the sink under the body filters). Returns the body filter.
std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<SsiSink> ssi, std::shared_ptr<http::ResponseSink> filter_below,
                                           http::ResponseSink& below);

}  // namespace torii::ssi
