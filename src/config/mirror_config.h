// ngx_http_mirror_module's settings: `mirror URI | off` and
// `mirror_request_body` (modules/mirror).
#pragma once

#include <string>
#include <vector>

namespace torii::config {

struct MirrorConfig {
  // One background subrequest per URI, in the order written; empty: off.
  std::vector<std::string> uris;
  // The mirrors get the client's body, which is then read before the
  // request goes on to its content handler (nginx's default: on).
  bool request_body = true;
};

}  // namespace torii::config
