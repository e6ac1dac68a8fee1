// proxy_bind, fastcgi_bind, uwsgi_bind, grpc_bind (and scgi_, memcached_):
// the local address an upstream connection is made from. A constant address
// is parsed once at load; one with variables is rendered and parsed per
// request (an empty value: no bind, as nginx).
#pragma once

#include <sys/socket.h>

#include <memory>
#include <string>

#include "config/template.h"
#include "core/result.h"

namespace torii::config {

struct Node;

struct UpstreamBind {
  Template value;  // with variables: rendered per request; else `addr` below
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::string name;          // as written, for "bind(NAME) failed"
  bool transparent = false;  // IP_TRANSPARENT: a source address not on this host
};

// "address [transparent]" or "off" (null). nginx's wording for a bad address
// ("invalid address") or a bad second word ("invalid parameter").
Result<std::shared_ptr<const UpstreamBind>> parse_upstream_bind(const Node& n);

// A rendered value ("192.0.2.1", "192.0.2.1:0", "[::1]"), nginx's
// ngx_parse_addr_port: false when it is no address.
bool upstream_bind_address(std::string_view text, sockaddr_storage& addr, socklen_t& len);

}  // namespace torii::config
