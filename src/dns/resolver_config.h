// The `resolver` directive: which name servers to ask and how long to keep
// their answers. Immutable, shared by every block that inherits it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace torii::dns {

struct ResolverConfig {
  // "1.2.3.4:53", "[::1]:5353": every server in the c-ares CSV form.
  std::vector<std::string> servers;
  std::chrono::milliseconds valid{0};  // valid=: overrides the answers' TTL; 0: use the TTL
  bool ipv4 = true;
  bool ipv6 = true;
  // The servers and options as one string: a worker keeps one resolver
  // (and one cache) per distinct key, across reloads.
  std::string key;
};

}  // namespace torii::dns
