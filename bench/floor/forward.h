// The forwarding floor: each client connection is paired, when accepted,
// with a connection of its own to a backend (round robin), kept for the
// client's life. Bytes go across as they come: per request one read and
// one write each way, both descriptors registered once (no epoll_ctl per
// request), no HTTP parsing.
#pragma once

#include <netinet/in.h>

#include <vector>

#include "loop.h"

namespace floor_bench {

struct ForwardSite {
  std::vector<sockaddr_in> backends;
  size_t next = 0;  // round robin
};

// A new client connection of a forwarding listener.
void forward(Loop& loop, int fd, ForwardSite& site);

}  // namespace floor_bench
