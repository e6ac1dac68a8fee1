// Percent-encoding of a URI component as nginx's NGX_ESCAPE_URI_COMPONENT
// does it: every byte but letters, digits and "-._~" becomes %XX. Used for
// the names in an autoindex listing's links and for
// $ssl_client_escaped_cert.
#pragma once

#include <string>
#include <string_view>

namespace torii::http {

void append_uri_component(std::string& out, std::string_view s);

}  // namespace torii::http
