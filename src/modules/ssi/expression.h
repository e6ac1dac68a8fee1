// The SSI module's string rules (nginx's ngx_http_ssi_module), pure and
// separate from any request: `$name` and `${name}` in parameter values,
// backslash escapes, the `if` command's expression (a string, `=`, `!=`,
// `/regex/` with captures), and echo's encodings.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torii::ssi {

// A variable's value by its lower-case name; false when it has none.
using Lookup = std::function<bool(std::string_view name, std::string& value)>;

// Replaces the variables in `text` and reads its escapes: `\` before `\`,
// `'`, `"` or `$` stands for that character, before anything else it
// stays. False (and `error` says why) for a `$` with no name or a `${`
// without its `}`.
bool evaluate(std::string_view text, const Lookup& lookup, std::string& out, std::string& error);

// A regex match the `if` command made: $0..$9 (by group) and named groups,
// which become SSI variables.
struct Match {
  std::vector<std::string> groups;  // $0 is the whole match
  std::vector<std::pair<std::string, std::string>> named;
};

// Evaluates an `if`/`elif` expression. Sets `result`; `match` receives the
// captures when a regex matched. False on an invalid expression (`error`).
bool evaluate_condition(std::string_view expr, const Lookup& lookup, bool& result, Match& match, std::string& error);

// echo's encodings: "entity" (nginx's HTML escaping of < > & "), "url"
// (percent-encoding as nginx's NGX_ESCAPE_HTML).
std::string entity_encode(std::string_view s);
std::string url_encode(std::string_view s);

}  // namespace torii::ssi
