// A geo {} block (nginx's geo module): a variable whose value depends on
// an address, by network (longest prefix wins) or, with `ranges`, by
// address range.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/template.h"
#include "modules/geo/range_table.h"
#include "net/ip_address.h"

namespace torii::config {

struct GeoConfig {
  std::string name;                 // without '$'
  bool has_source = false;          // `geo $arg_ip $var`: the address comes from this
  Template source;
  std::vector<net::Cidr> proxies;   // `proxy`: trusted to name the client in X-Forwarded-For
  bool proxy_recursive = false;
  bool ranges = false;              // `ranges`: IPv4 address ranges instead of networks
  std::vector<std::string> values;  // the tables hold indexes into this
  std::string default_value;        // nginx's default is the empty string
  geo::RangeTable v4;               // keys: the 32-bit address
  geo::RangeTable v6;               // keys: the 128-bit address
};

}  // namespace torii::config
