// The checks a response head's fields pass before they are handed to
// nghttp2, which sends what it is given. They run on every field of every
// response, so they are written to be cheap.
#pragma once

#include <string_view>

namespace torii::http2 {

// Fields HTTP/2 forbids (RFC 9113 8.2.2), and the framing we decide
// (content-length): never copied from the head.
bool dropped_in_h2(std::string_view name);

// A field name HTTP/2 can carry: visible ASCII, no colon (RFC 9113 8.2.1).
bool safe_name(std::string_view name);

// No CR, LF or NUL in a value: they would split or end the field when the
// client turns it back into HTTP/1. Eight bytes a step.
bool safe_value(std::string_view value);

}  // namespace torii::http2
