#include "modules/realip/variables.h"

#include <charconv>

#include "http/exchange.h"
#include "net/ip_address.h"
#include "net/proxy_protocol.h"

namespace torii::realip {

namespace {
void append_port(std::string& out, uint16_t port) {
  char buf[8];
  auto r = std::to_chars(buf, buf + sizeof buf, port);
  out.append(buf, r.ptr);
}
}  // namespace

bool append_variable(config::VarId id, const http::Exchange& ex, std::string& out) {
  using config::VarId;
  const auto* pp = ex.socket_conn().proxy_protocol.get();
  switch (id) {
    case VarId::binary_remote_addr: {
      net::IpAddress ip = net::ip_of(ex.conn().peer);
      if (ip.family == 0) {
        // A unix socket's client: nginx gives its address text, "unix:".
        if (ex.conn().peer.ss_family != AF_UNIX) return false;
        out.append(ex.conn().remote_addr);
        return true;
      }
      out.append(reinterpret_cast<const char*>(ip.bytes), ip.size());
      return true;
    }
    case VarId::realip_remote_addr:
      out.append(ex.socket_conn().remote_addr);
      return true;
    case VarId::realip_remote_port:
      // nginx leaves the value empty for a port of 0 (no port known).
      if (ex.socket_conn().remote_port) append_port(out, ex.socket_conn().remote_port);
      return true;
    case VarId::proxy_protocol_addr:
      if (!pp) return false;
      out.append(pp->src_addr);
      return true;
    case VarId::proxy_protocol_port:
      if (!pp) return false;
      append_port(out, pp->src_port);
      return true;
    case VarId::proxy_protocol_server_addr:
      if (!pp) return false;
      out.append(pp->dst_addr);
      return true;
    case VarId::proxy_protocol_server_port:
      if (!pp) return false;
      append_port(out, pp->dst_port);
      return true;
    default:
      return false;
  }
}

}  // namespace torii::realip
