// Names of directives torii does not have, for the error a config gets
// when it uses one: a real nginx directive says which module it belongs to
// ("not yet supported"), a directive of a well-known third-party module
// names that module, and anything else (a typo) is an unknown directive.
#pragma once

#include <string>
#include <string_view>

namespace torii::config {

// The nginx module that defines `name` ("ngx_http_gzip_module"), or empty.
std::string_view nginx_module_of(std::string_view name);

// The third-party module (or the commercial edition) that `name` comes
// from, or empty.
std::string_view third_party_module_of(std::string_view name);

// True for a block whose body is another language's code (Lua's
// `content_by_lua_block { ... }`), which the lexer skips whole.
bool has_foreign_code_block(std::string_view name);

// The error text for a directive that no table of torii's knows.
std::string missing_directive_message(std::string_view name);

}  // namespace torii::config
