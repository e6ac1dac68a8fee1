// ngx_http_charset_module's header filter: `charset X` names X in the
// Content-Type of responses whose MIME type is in charset_types (text/html
// always), unless the type already names a charset. When the body is in
// another charset (the response names it and override_charset is on, or
// source_charset says so) and a charset_map joins the two, the body is
// recoded (charset_sink.h) and the head names X.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace torii::http {
struct ResponseHead;
class Exchange;
}

namespace torii::charset {

class CharsetSink;

// For a response of the client's request in a location with `charset`:
// fixes the head's Content-Type (and its length when recoding changes it)
// and returns the body filter when the body is to be recoded, else null.
std::shared_ptr<CharsetSink> header_filter(http::Exchange& ex, http::ResponseHead& head);

// True when a response of this Content-Type would be recoded here to or
// from UTF-8: its length then differs from the file's, so byte ranges of
// the file do not apply (a one-byte to one-byte recoding keeps them, as
// nginx's range filter still finds the length).
bool recoding_changes_length(const http::Exchange& ex, std::string_view type);

// The value of a Content-Type's charset parameter (unquoted), or empty.
std::string_view charset_param(std::string_view type);

// nginx's default charset_types (text/html is always included).
const std::vector<std::string>& default_types();

// The upstream's X-Accel-Charset, as nginx's override: whatever the
// location's charset and charset_types, a Content-Type without a charset
// gets this one (not on a 301 or 302). One that already names a charset
// keeps it (nginx would need a charset_map to recode). False when
// `charset` is none of the config's `known` names (nginx logs "unknown
// charset") and the head is left as it is.
bool apply_override(std::string_view charset, const std::vector<std::string>& known, int status,
                    http::ResponseHead& head);

}  // namespace torii::charset
