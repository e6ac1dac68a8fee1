// The geoip2 module's directives (http level only, as the module's): each
// block's file is opened here, once per load, and shared by the workers;
// its variables join the config's like a geo {} block's.
#include <memory>
#include <string>

#include "config/directives.h"
#include "config/geoip2_config.h"
#include "config/shared_args.h"
#include "core/quote.h"
#include "modules/geoip2/block_reader.h"

namespace torii::config {

namespace {

// The http block's settings, copied on write.
Geoip2Config& geoip2_of(Compiler& c) {
  auto copy = c.cfg().geoip2 ? std::make_shared<Geoip2Config>(*c.cfg().geoip2) : std::make_shared<Geoip2Config>();
  Geoip2Config* raw = copy.get();
  c.cfg().geoip2 = std::move(copy);
  return *raw;
}

// A name a geoip2 line already defined: the later line's meaning wins, as
// the module's variables are changeable ones.
bool replace_existing(Geoip2Config& g, std::shared_ptr<const Geoip2Variable>& v) {
  for (auto& existing : g.variables) {
    if (existing->lookup.name != v->lookup.name) continue;
    existing = std::move(v);
    return true;
  }
  return false;
}

Status set_geoip2(Compiler& c, Scope&, const Node& n) {
  Geoip2Config& g = geoip2_of(c);
  std::vector<geoip2::Lookup> lookups;
  if (auto st = geoip2::read_geoip2_block(c, n, g.databases, lookups); !st) return st;
  for (auto& l : lookups) {
    auto v = std::make_shared<Geoip2Variable>();
    if (!l.source.empty()) {
      auto t = compile_template(l.source);
      if (!t) return node_error(n, t.error());
      v->source = std::move(*t);
    }
    v->lookup = std::move(l);
    std::shared_ptr<const Geoip2Variable> frozen = std::move(v);
    if (replace_existing(g, frozen)) continue;
    const std::string name = frozen->lookup.name;
    if (variable_taken(name)) return node_error(n, "the duplicate " + q(name) + " variable");
    define_variable(name, g.variables.size(), VarId::geoip2_);
    g.variables.push_back(std::move(frozen));
  }
  return Ok{};
}

Status set_proxy(Compiler& c, Scope&, const Node& n) {
  auto cidr = trusted_network(c, n);
  if (!cidr) return Error{cidr.error()};
  // The module's own reading of the network takes no unix: form.
  if (cidr->family == AF_UNIX) return node_error(n, "invalid network " + q(n.args[0]));
  geoip2_of(c).proxies.push_back(*cidr);
  return Ok{};
}

Status set_proxy_recursive(Compiler& c, Scope&, const Node& n) {
  geoip2_of(c).proxy_recursive = n.args[0] == "on";
  return Ok{};
}

constexpr DirectiveSpec kGeoip2Directives[] = {
    // The block's lines are its variables and auto_reload, checked by
    // set_geoip2; kUpstream leaves them to it.
    {"geoip2", kHttp, kArgs1 | kBlock, false, false, kUpstream, &set_geoip2},
    {"geoip2_proxy", kHttp, kArgs1, false, false, kMain, &set_proxy},
    {"geoip2_proxy_recursive", kHttp, kFlag, true, false, kMain, &set_proxy_recursive},
};

}  // namespace

std::span<const DirectiveSpec> geoip2_directives() { return kGeoip2Directives; }

}  // namespace torii::config
