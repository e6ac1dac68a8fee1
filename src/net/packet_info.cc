#include "net/packet_info.h"

#include <cstring>

namespace torii::net {

void enable_packet_info(int fd, int family) {
  int one = 1;
  if (family == AF_INET6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
  } else {
    setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
  }
}

bool datagram_destination(msghdr& msg, sockaddr_storage& local, uint16_t port_be) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      in_pktinfo info;
      std::memcpy(&info, CMSG_DATA(c), sizeof info);
      auto& sa = reinterpret_cast<sockaddr_in&>(local);
      sa = sockaddr_in{};
      sa.sin_family = AF_INET;
      sa.sin_addr = info.ipi_addr;
      sa.sin_port = port_be;
      return true;
    }
    if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      in6_pktinfo info;
      std::memcpy(&info, CMSG_DATA(c), sizeof info);
      auto& sa = reinterpret_cast<sockaddr_in6&>(local);
      sa = sockaddr_in6{};
      sa.sin6_family = AF_INET6;
      sa.sin6_addr = info.ipi6_addr;
      sa.sin6_port = port_be;
      return true;
    }
  }
  return false;
}

size_t put_source_address(cmsghdr* c, const sockaddr* local) {
  if (local->sa_family == AF_INET) {
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof(in_pktinfo));
    in_pktinfo info{};
    info.ipi_spec_dst = reinterpret_cast<const sockaddr_in*>(local)->sin_addr;
    std::memcpy(CMSG_DATA(c), &info, sizeof info);
    return CMSG_SPACE(sizeof(in_pktinfo));
  }
  c->cmsg_level = IPPROTO_IPV6;
  c->cmsg_type = IPV6_PKTINFO;
  c->cmsg_len = CMSG_LEN(sizeof(in6_pktinfo));
  in6_pktinfo info{};
  info.ipi6_addr = reinterpret_cast<const sockaddr_in6*>(local)->sin6_addr;
  std::memcpy(CMSG_DATA(c), &info, sizeof info);
  return CMSG_SPACE(sizeof(in6_pktinfo));
}

}  // namespace torii::net
