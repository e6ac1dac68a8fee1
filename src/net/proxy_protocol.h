// The PROXY protocol header (HAProxy's spec, versions 1 and 2) that a load
// balancer sends before anything else on a connection: the client's and
// the balancer's addresses. A pure function over the bytes received so
// far: it says whether more are needed, how many the header took, and
// what it carried.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace torii::net {

// The addresses of a PROXY header, as text ("192.0.2.1", "2001:db8::1").
struct ProxyProtocolAddrs {
  std::string src_addr;  // the client, as the balancer saw it
  std::string dst_addr;  // the address the client connected to
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
};

// Bytes nginx reads for a header at most (v1 is shorter: 107).
inline constexpr size_t kProxyProtocolMaxHeader = 4096;
inline constexpr size_t kProxyProtocolV1MaxHeader = 107;

struct ProxyProtocolResult {
  enum class Kind : uint8_t { need_more, done, error };
  Kind kind = Kind::need_more;
  size_t size = 0;  // done: the header's length; the connection's own bytes follow
  // done: the addresses; none for v1 "UNKNOWN", v2 LOCAL, or a v2 family
  // or transport other than TCP over IPv4/IPv6 (nginx ignores those too).
  std::optional<ProxyProtocolAddrs> addrs;
  std::string error;  // error: nginx's message, e.g. broken header: "GET / HTTP/1.1"
};

// `in` holds the first bytes of the connection.
ProxyProtocolResult parse_proxy_protocol(std::string_view in);

// nginx's message for bytes that are not a header: broken header: "..."
// (up to the first CR or LF, other control bytes as \xNN).
std::string proxy_protocol_broken_header(std::string_view in);

// The v1 header a proxy sends first (`proxy_protocol on`), as nginx writes
// it: "PROXY TCP4|TCP6 SRC DST SRCPORT DSTPORT\r\n" (nginx says TCP for UDP too).
std::string proxy_protocol_v1_header(const sockaddr_storage& peer, const sockaddr_storage& local);

}  // namespace torii::net
