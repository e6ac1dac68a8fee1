// ngx_http_charset_module's header filter, without recoding: `charset X`
// adds "; charset=X" to the Content-Type of responses whose MIME type is
// in charset_types (text/html always), unless the type already names a
// charset. source_charset and override_charset are accepted; bytes are
// never converted (a UTF-8 site's bytes pass as they are).
#pragma once

#include <string>
#include <vector>

namespace torii::http {
struct ResponseHead;
}

namespace torii::charset {

// nginx's default charset_types (text/html is always included).
const std::vector<std::string>& default_types();

void apply(const std::string& charset, const std::vector<std::string>& types, http::ResponseHead& head);

}  // namespace torii::charset
