// Datagram sockets for stream's `listen ... udp`: bound, non-blocking,
// SO_REUSEPORT so that every worker holds its own (the kernel sends one
// client's datagrams to one of them). QUIC has its own (http3/endpoint),
// with GRO and packet info that a plain relay does not want.
#pragma once

#include "config/config.h"
#include "core/result.h"

namespace torii::net {

// On a wildcard address (0.0.0.0, [::]) the socket reports each
// datagram's destination (net/packet_info).
Result<int> open_datagram_listener(const config::Listen& listen);

bool is_wildcard(const sockaddr_storage& addr);

}  // namespace torii::net
