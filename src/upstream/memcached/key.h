// The memcached request, as a pure transform: "get KEY\r\n" with the key
// escaped as nginx escapes $memcached_key (control characters, space and
// '%' as %XX, upper-case hex), so that a URI with spaces or a stray CR
// cannot end the command early or add one.
#pragma once

#include <string>
#include <string_view>

namespace torii::upstream::memcached {

// Appends `key`, escaped, to `out`.
void append_escaped_key(std::string_view key, std::string& out);

// Appends "get " + the escaped key + CRLF; `escaped` gets the key as sent
// (the reply's VALUE line must repeat it).
void append_get(std::string_view key, std::string& out, std::string& escaped);

}  // namespace torii::upstream::memcached
