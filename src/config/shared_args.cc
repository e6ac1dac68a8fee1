#include "config/shared_args.h"

#include <string>

#include "core/ascii.h"
#include "core/quote.h"

namespace torii::config {

Status add_named_bits(const Node& n, std::span<const NamedBit> names, uint8_t& mask) {
  for (const std::string& a : n.args) {
    bool known = false;
    for (const NamedBit& nb : names) {
      if (core::iequals(a, nb.name)) {
        mask |= nb.bit;
        known = true;
        break;
      }
    }
    if (!known) return node_error(n, "invalid value " + q(a));
  }
  return Ok{};
}

Result<net::Cidr> trusted_network(Compiler& c, const Node& n) {
  net::Cidr cidr;
  switch (net::parse_cidr(n.args[0], cidr)) {
    case net::CidrParse::low_bits_set:
      c.warn(n, "low address bits of " + n.args[0] + " are meaningless");
      [[fallthrough]];
    case net::CidrParse::ok:
      return cidr;
    case net::CidrParse::invalid:
      break;
  }
  return node_error(n, "invalid network " + q(n.args[0]));
}

}  // namespace torii::config
