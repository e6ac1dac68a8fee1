// The referer module's settings for one block (nginx's
// ngx_http_referer_module): what `valid_referers` accepts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"

namespace torii::config {

class Regex;

// A host (exact, "*.example.com", ".example.com" or "www.example.*") and,
// when written "host/uri", the prefix the referer's path must start with.
struct RefererHost {
  ServerName host;
  std::string uri;  // empty: any path
};

struct RefererConfig {
  bool none = false;          // no Referer field is valid
  bool blocked = false;       // a Referer without "http://" or "https://" is valid
  bool server_names = false;  // the request's server's names are valid hosts
  std::vector<RefererHost> hosts;
  std::vector<std::shared_ptr<Regex>> regexes;  // "~..." against the referer after its scheme, caseless
};

}  // namespace torii::config
