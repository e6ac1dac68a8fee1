// The realip module: when the peer is a trusted proxy (set_real_ip_from),
// the client's address comes from the header it names (real_ip_header)
// or the PROXY protocol header, and from then on the exchange's conn()
// is that client: logs, allow/deny, limits, X-Forwarded-For all see it.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "config/realip_config.h"
#include "net/ip_address.h"

namespace torii::http {
class Exchange;
}

namespace torii::realip {

// Whether the peer is one set_real_ip_from trusts ("unix:" for a client of
// a unix socket, which has no IP address).
bool trusted_peer(const net::IpAddress& ip, const std::vector<net::Cidr>& trusted);

// nginx runs the module in its post-read phase with the server's settings
// and again before access checks with the location's; the first that
// replaces the address wins, later calls do nothing.
void run(http::Exchange& ex, const config::RealIpConfig* cfg);

// nginx's ngx_http_get_forwarded_addr: walks the address lists (header
// values, first to last) from the right while the address at hand is
// trusted; `recursive` off takes only the last entry. Returns the client,
// or nullopt when the peer is not trusted or the value is no address.
std::optional<net::IpAddress> forwarded_address(const net::IpAddress& peer, const std::vector<std::string_view>& values,
                                                const std::vector<net::Cidr>& trusted, bool recursive);

// The geo and geoip modules' `proxy` lists: the client X-Forwarded-For
// names when `ip` is trusted, else `ip` itself.
net::IpAddress x_forwarded_client(const http::Exchange& ex, const net::IpAddress& ip,
                                  const std::vector<net::Cidr>& trusted, bool recursive);

}  // namespace torii::realip
