// Where a stream proxy_pass goes: its `upstream {}`, or for `proxy_pass
// $var` the rendered text as nginx reads it (an upstream {} of that name
// without case, a literal address, or host:port for the resolver), and
// the one-session groups those addresses make. Shared by the TCP and UDP
// sessions.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stream/stream_config.h"

namespace torii::dns {
struct Answer;
}

namespace torii::stream {

struct PassTarget {
  std::shared_ptr<const Upstream> upstream;  // set: proxy to it
  std::string host;                          // else, when set: resolve it, then `port`
  uint16_t port = 0;
  std::string error;  // neither: nginx's complaint
};

PassTarget find_pass_target(const StreamConfig& cfg, const std::string& target);

// "ip:port" or "[ip6]:port".
bool literal_address(std::string_view text, sockaddr_storage& addr);

// A group of one session's own: the addresses `proxy_pass $var` rendered
// or the resolver answered.
std::shared_ptr<const Upstream> session_group(const std::string& name, const std::vector<sockaddr_storage>& addrs);

// The resolver's addresses with `port`.
std::vector<sockaddr_storage> answer_addresses(const dns::Answer& a, uint16_t port);

}  // namespace torii::stream
