// The ssl module's directives (ssl_* and http2-free TLS directives).
#include "config/directives.h"

namespace torii::config {

std::span<const DirectiveSpec> ssl_directives() { return {}; }

}  // namespace torii::config
