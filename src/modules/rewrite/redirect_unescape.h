// The unescaping nginx gives a `rewrite ... redirect` target before it
// goes out as Location (NGX_UNESCAPE_REDIRECT): request bytes reach it
// through captures and $arg_*, so it has a fuzz target of its own.
#pragma once

#include <string>
#include <string_view>

namespace torii::rewrite {

// %XX above '%' and below 0x7f becomes its byte, up to the first '?'
// (written or decoded); the rest of the target follows as it is. The
// result is never longer than `in`, and holds a CR or LF only where `in`
// had one raw.
std::string unescape_redirect(std::string_view in);

}  // namespace torii::rewrite
