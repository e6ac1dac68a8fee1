// The target URLs: http:// and https:// only, with the parts a request needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace torii::load {

struct Url {
  bool tls = false;          // https
  std::string host;          // without brackets for an IPv6 literal
  uint16_t port = 0;
  std::string authority;     // as written: host[:port], for Host / :authority
  std::string path;          // path and query, "/" when empty
};

Result<Url> parse_url(std::string_view text);

}  // namespace torii::load
