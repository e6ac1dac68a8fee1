// Argument forms that several modules' directives share, read one way.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "config/directives.h"
#include "net/ip_address.h"

namespace torii::config {

struct NamedBit {
  std::string_view name;  // lower case; matched without regard to case
  uint8_t bit;            // 0: a name that adds nothing ("off")
};

// `dav_methods PUT DELETE ...`-like lines: each argument adds its bit to
// `mask`; one not in `names` is "invalid value".
Status add_named_bits(const Node& n, std::span<const NamedBit> names, uint8_t& mask);

// The network of a `geoip_proxy`-like line (an address or CIDR): "invalid
// network" when it is neither, with nginx's warning when host bits are set.
Result<net::Cidr> trusted_network(Compiler& c, const Node& n);

}  // namespace torii::config
