// Directives that decide who the client is: the realip module's
// set_real_ip_from, real_ip_header and real_ip_recursive, and geo {}.
// Contexts, defaults and messages are nginx's.
#include <netdb.h>

#include <cstring>
#include <memory>
#include <string>

#include "config/directives.h"
#include "core/quote.h"
#include "config/realip_config.h"
#include "modules/geo/geo_compiler.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

// Settings are shared copy-on-write: a block changes its own copy.
RealIpConfig& realip_of(Scope& s) {
  auto copy = s.settings->realip ? std::make_shared<RealIpConfig>(*s.settings->realip) : std::make_shared<RealIpConfig>();
  RealIpConfig* raw = copy.get();
  s.settings->realip = std::move(copy);
  return *raw;
}

Status set_real_ip_from(Compiler& c, Scope& s, const Node& n) {
  RealIpConfig& r = realip_of(s);
  if (!s.realip_from_here) {  // the first one here replaces the inherited list (nginx's merge)
    r.from.clear();
    s.realip_from_here = true;
  }
  net::Cidr cidr;
  switch (net::parse_cidr(n.args[0], cidr)) {
    case net::CidrParse::low_bits_set:
      c.warn(n, "low address bits of " + q(n.args[0]) + " are meaningless");
      [[fallthrough]];
    case net::CidrParse::ok:
      r.from.push_back(cidr);
      return Ok{};
    case net::CidrParse::invalid:
      break;
  }
  // A host name: every address it resolves to, each as a single address.
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (n.args[0].find('/') != std::string::npos || getaddrinfo(n.args[0].c_str(), nullptr, &hints, &res) != 0 || !res)
    return node_error(n, "host not found in set_real_ip_from " + q(n.args[0]));
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    sockaddr_storage ss{};
    memcpy(&ss, ai->ai_addr, std::min<size_t>(ai->ai_addrlen, sizeof ss));
    net::IpAddress ip = net::ip_of(ss);
    if (ip.family == 0) continue;
    net::Cidr one;
    if (net::parse_cidr(net::ip_text(ip), one) == net::CidrParse::ok) r.from.push_back(one);
  }
  freeaddrinfo(res);
  return Ok{};
}

Status set_real_ip_header(Compiler&, Scope& s, const Node& n) {
  RealIpConfig& r = realip_of(s);
  using Source = RealIpConfig::Source;
  // nginx compares these three as written (case matters); any other
  // name is a header of that name.
  const std::string& v = n.args[0];
  r.header.clear();
  if (v == "X-Real-IP") {
    r.source = Source::x_real_ip;
  } else if (v == "X-Forwarded-For") {
    r.source = Source::x_forwarded_for;
  } else if (v == "proxy_protocol") {
    r.source = Source::proxy_protocol;
  } else {
    r.source = Source::header;
    r.header = v;
  }
  return Ok{};
}

Status set_real_ip_recursive(Compiler&, Scope& s, const Node& n) {
  realip_of(s).recursive = n.args[0] == "on";
  return Ok{};
}

constexpr DirectiveSpec kIdentityDirectives[] = {
    {"set_real_ip_from", kHSL, kArgs1, false, false, kMain, &set_real_ip_from},
    {"real_ip_header", kHSL, kArgs1, true, false, kMain, &set_real_ip_header},
    {"real_ip_recursive", kHSL, kFlag, true, false, kMain, &set_real_ip_recursive},
    // geo's lines are its entries, checked by set_geo; kUpstream leaves a
    // block's children to its setter.
    {"geo", kHttp, kArgs1 | kArgs2 | kBlock, false, false, kUpstream, &geo::set_geo},
};

}  // namespace

std::span<const DirectiveSpec> identity_directives() { return kIdentityDirectives; }

}  // namespace torii::config
