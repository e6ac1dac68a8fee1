// The addition module (nginx's ngx_http_addition_module): the responses of
// `add_before_body URI` and `add_after_body URI` go before and after the
// body of a client's 200 response of a type in addition_types (text/html
// by default, "*" for any). They are subrequests (modules/ssi/subrequest.h)
// through the server's locations. The head loses its Content-Length and
// Accept-Ranges, and a strong ETag turns weak.
#pragma once

#include <memory>

#include "http/response.h"

namespace torii::http {
class Exchange;
}

namespace torii::addition {

// Runs the header filter on `head` (which it may change). Returns the body
// filter when the body gets additions, else null.
std::shared_ptr<http::ResponseSink> header_filter(http::Exchange& ex, http::ResponseHead& head);

// Puts the filter in front of `filter_below` (or null) over `below`.
// Returns the body filter.
std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<http::ResponseSink> addition,
                                           std::shared_ptr<http::ResponseSink> filter_below, http::ResponseSink& below);

}  // namespace torii::addition
