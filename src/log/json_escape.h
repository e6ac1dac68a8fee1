// JSON string escaping for log lines (log_format escape=json) and any other
// place that writes JSON by hand.
#pragma once

#include <string>
#include <string_view>

namespace torii::log {

// Appends `s` as the inside of a JSON string (no surrounding quotes): '"'
// and '\\' get a backslash, control bytes become \b \f \n \r \t or \u00XX.
// Bytes >= 0x80 pass through unchanged, as in nginx: values are logged as
// received, not validated as UTF-8.
void append_json_escaped(std::string& out, std::string_view s);

// True for a byte that append_json_escaped rewrites.
inline bool json_escapes(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

// True if append_json_escaped would change `s`.
bool needs_json_escape(std::string_view s);

}  // namespace torii::log
