#include "config/upstream_bind.h"

#include <cstring>

#include "config/ast.h"
#include "config/directives.h"
#include "net/ip_address.h"

namespace torii::config {

bool upstream_bind_address(std::string_view text, sockaddr_storage& addr, socklen_t& len) {
  net::IpAddress ip;
  if (!net::parse_ip_port(text, ip)) return false;
  addr = net::to_sockaddr(ip);
  len = ip.family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  return true;
}

Result<std::shared_ptr<const UpstreamBind>> parse_upstream_bind(const Node& n) {
  if (n.args.size() == 1 && n.args[0] == "off") return std::shared_ptr<const UpstreamBind>{};
  auto b = std::make_shared<UpstreamBind>();
  auto t = compile_template(n.args[0]);
  if (!t) return node_error(n, t.error());
  if (t->is_constant()) {
    if (!upstream_bind_address(n.args[0], b->addr, b->addr_len))
      return node_error(n, "invalid address \"" + n.args[0] + "\"");
  } else {
    b->value = std::move(*t);
  }
  b->name = n.args[0];
  if (n.args.size() > 1) {
    if (n.args[1] != "transparent") return node_error(n, "invalid parameter \"" + n.args[1] + "\"");
    b->transparent = true;
  }
  return std::shared_ptr<const UpstreamBind>(std::move(b));
}

}  // namespace torii::config
