// IP_PKTINFO / IPV6_PKTINFO: on a wildcard UDP listen, the address a
// client's datagram was sent to (read from recvmsg's control data), and
// the source address a reply must leave from (written into sendmsg's), so
// the client sees its answer come from where it asked. QUIC's endpoint and
// stream's UDP listener both use them.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace torii::net {

// Turns the packet-info options on (both families; the kernel ignores the other).
void enable_packet_info(int fd, int family);

// The datagram's destination, with `port_be` (network order); false when
// the control data has none.
bool datagram_destination(msghdr& msg, sockaddr_storage& local, uint16_t port_be);

// The control message that sends from `local`'s address; returns the space
// it takes (CMSG_SPACE of the family's pktinfo).
size_t put_source_address(cmsghdr* c, const sockaddr* local);

// Room for one put_source_address.
inline constexpr size_t kPacketInfoSpace = CMSG_SPACE(sizeof(in6_pktinfo));

}  // namespace torii::net
