// "s" in double quotes: how nginx's messages name a value, a directive or
// a file, and so how torii's do.
#pragma once

#include <string>
#include <string_view>

namespace torii {

inline std::string q(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace torii
