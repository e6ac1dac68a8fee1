// set_real_ip_from, real_ip_header, real_ip_recursive (nginx's realip
// module): which peers are trusted to name the client, and where they
// name it.
#pragma once

#include <string>
#include <vector>

#include "net/ip_address.h"

namespace torii::config {

struct RealIpConfig {
  std::vector<net::Cidr> from;  // empty: the module does nothing here
  enum class Source : uint8_t { x_real_ip, x_forwarded_for, proxy_protocol, header };
  Source source = Source::x_real_ip;
  std::string header;  // Source::header: the field's name as written
  bool recursive = false;
};

}  // namespace torii::config
