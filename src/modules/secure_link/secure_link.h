// The secure_link module (nginx's ngx_http_secure_link_module): the
// $secure_link and $secure_link_expires variables, judged per request from
// the location's settings.
//
// With secure_link and secure_link_md5: $secure_link is "1" when the
// rendered hash (base64url, 16 bytes once decoded) is the MD5 of the
// rendered secure_link_md5 string and the expiry time, if given, has not
// passed; "0" when it has passed; no value otherwise. With
// secure_link_secret: $secure_link is the LINK of a /PREFIX/MD5HEX/LINK
// request URI whose MD5HEX is md5(LINK + secret); no value otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace torii::http {
class Exchange;
}

namespace torii::secure_link {

// Append the variable's value; false when it has none here.
bool append_secure_link(const http::Exchange& ex, std::string& out);
bool append_secure_link_expires(const http::Exchange& ex, std::string& out);

// nginx's base64url decoding (no padding needed; '=' ends the input).
// False on a byte outside the alphabet or a length that cannot be.
bool decode_base64url(std::string_view in, std::string& out);

}  // namespace torii::secure_link
