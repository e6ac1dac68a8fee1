// nginx's "%.Nf" (ngx_sprintf): a fixed number of decimals, the fraction
// rounded half up on the binary value, and "-" kept for a negative that
// rounds to zero. The geoip modules print coordinates this way.
#pragma once

#include <string>

namespace torii {

// `digits` is at most 9.
void append_fixed(double v, unsigned digits, std::string& out);

}  // namespace torii
