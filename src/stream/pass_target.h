// Where a stream proxy_pass goes: its `upstream {}`, or for `proxy_pass
// $var` the rendered text as nginx reads it (an upstream {} of that name
// without case, a literal address, or host:port for the resolver), and
// the one-session groups those addresses make, and the whole step a
// session runs to choose where it goes (`choose_upstream`). Shared by the
// TCP and UDP sessions.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stream/stream_config.h"

namespace torii::dns {
struct Answer;
class Lookup;
}

namespace torii::stream {

class StreamWorker;
struct Facts;

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

// The step a session runs before its first try, as nginx's stream proxy:
// `proxy_pass GROUP`, or the rendered `proxy_pass $var` found as above and,
// for a host name, resolved with the server's resolver (its cache first).
// `chosen` gets the group; `failed` gets nginx's complaint when there is
// none (the session logs it "while connecting to upstream" and ends with
// 502). Either may run before this returns. A lookup still under way is
// returned: the session keeps it while it waits, and dropping it (as its
// end does) drops the answer.
using UpstreamChosen = std::function<void(std::shared_ptr<const Upstream>)>;
using UpstreamFailed = std::function<void(const std::string& error)>;
std::shared_ptr<dns::Lookup> choose_upstream(StreamWorker& w, const StreamConfig& cfg, const Server& server,
                                             const Facts& facts, UpstreamChosen chosen, UpstreamFailed failed);

}  // namespace torii::stream
