// The http2 module's directives (http2 and http2_*).
#include "config/directives.h"

namespace torii::config {

std::span<const DirectiveSpec> http2_directives() { return {}; }

}  // namespace torii::config
