// The proxy module's directives (proxy_pass, proxy_*, upstream {}, map).
#include "config/directives.h"

namespace torii::config {

std::span<const DirectiveSpec> proxy_directives() { return {}; }

}  // namespace torii::config
