// ngx_http_charset_module's header filter, without recoding: `charset X`
// adds "; charset=X" to the Content-Type of responses whose MIME type is
// in charset_types (text/html always), unless the type already names a
// charset. source_charset and override_charset are accepted; bytes are
// never converted (a UTF-8 site's bytes pass as they are).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace torii::http {
struct ResponseHead;
}

namespace torii::charset {

// nginx's default charset_types (text/html is always included).
const std::vector<std::string>& default_types();

void apply(const std::string& charset, const std::vector<std::string>& types, http::ResponseHead& head);

// The upstream's X-Accel-Charset, as nginx's override: whatever the
// location's charset and charset_types, a Content-Type without a charset
// gets this one (not on a 301 or 302). One that already names a charset
// keeps it (nginx would need a charset_map to recode). False when
// `charset` is none of the config's `known` names (nginx logs "unknown
// charset") and the head is left as it is.
bool apply_override(std::string_view charset, const std::vector<std::string>& known, int status,
                    http::ResponseHead& head);

}  // namespace torii::charset
