// geoip2 {}, geoip2_proxy, geoip2_proxy_recursive (the geoip2 module, http
// level): the MaxMind DB files the block variables read, the variables,
// and the proxies trusted to name the client in X-Forwarded-For. The
// stream block has its own (stream/stream_config.h, without proxies).
#pragma once

#include <memory>
#include <vector>

#include "config/template.h"
#include "modules/geoip2/lookup.h"
#include "net/ip_address.h"

namespace torii::geoip2 {
class Database;
}

namespace torii::config {

struct Geoip2Variable {
  geoip2::Lookup lookup;
  Template source;  // source=: compiled; empty: the client's address
};

struct Geoip2Config {
  // Each file once, in the order of the blocks; auto_reload checks these.
  std::vector<std::shared_ptr<geoip2::Database>> databases;
  // By VarId::geoip2_ arg; a later line of the same name replaces an earlier.
  std::vector<std::shared_ptr<const Geoip2Variable>> variables;
  std::vector<net::Cidr> proxies;
  bool proxy_recursive = false;
};

}  // namespace torii::config
