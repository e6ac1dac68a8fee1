// The sub module (nginx's ngx_http_sub_module): a header filter that
// decides whether a response's body is searched, and a body filter that
// replaces the `sub_filter` strings in it as it streams (sub_matcher.h).
//
// nginx's rules: any status; not an empty body (a known length of 0); a
// type in sub_filter_types (text/html by default, "*" for any). The head
// then loses its Content-Length, and Last-Modified and ETag too, unless
// sub_filter_last_modified is on (the ETag then turns weak). Replacements
// may hold variables, each rendered when its string is first found.
//
// A body with a Content-Encoding is left alone: nginx would search its
// encoded bytes, where the strings do not occur (the usual config asks
// the upstream for an unencoded body with `proxy_set_header
// Accept-Encoding ""`). The filter runs before compression, as in nginx:
// compression encodes the replaced body.
#pragma once

#include <memory>
#include <string_view>

#include "http/response.h"

namespace torii::config {
struct LocationSettings;
}

namespace torii::http {
class Exchange;
}

namespace torii::sub {

class SubSink;

// True when sub_filter would search a response of this Content-Type (so
// byte ranges of the file do not apply to what is sent).
bool searches(const config::LocationSettings& s, std::string_view type);

// Runs the header filter on `head` (which it may change). Returns the body
// filter when the body is to be searched, else null.
std::shared_ptr<SubSink> header_filter(http::Exchange& ex, http::ResponseHead& head);

// Puts `sub` in front of the filters made after it: `filter_below` (the
// compression filter, or null) over `below` (the sink under the body
// filters). Returns the exchange's body filter.
std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<SubSink> sub, std::shared_ptr<http::ResponseSink> filter_below,
                                           http::ResponseSink& below);

}  // namespace torii::sub
