// Standard base64 decoding as nginx's ngx_decode_base64 does it: the text
// up to the first '=' (or its end) is decoded, every character must be in
// the alphabet, and a length that cannot end a quantum (len % 4 == 1) is
// an error.
#pragma once

#include <string>
#include <string_view>

namespace torii::core {

// The value of one base64 character, -1 for any other byte.
int base64_sextet(unsigned char c);

// Appends the decoded bytes of `text` to `out`; false (out unchanged) on
// bad input.
bool decode_base64(std::string_view text, std::string& out);

}  // namespace torii::core
