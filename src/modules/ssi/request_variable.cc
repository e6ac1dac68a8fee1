#include "modules/ssi/request_variable.h"

#include "config/geo_config.h"
#include "config/geoip2_config.h"
#include "config/map_config.h"
#include "config/split_clients_config.h"
#include "config/template.h"
#include "http/exchange.h"
#include "http/variables.h"

namespace torii::ssi {

namespace {

// The variables a config defines are known by name only while it compiles;
// at request time they are found in the config itself.
// A block's variable that a `set` also writes carries that slot, as the
// config's own templates do (config::Variable::set_slot).
bool defined_by_config(const config::Config& cfg, std::string_view name, config::Variable& v) {
  uint32_t user = config::kNoSlot;
  for (size_t i = 0; i < cfg.variables.size(); ++i) {
    if (cfg.variables[i] == name && name != "args") {
      user = uint32_t(i);
      break;
    }
  }
  auto by_name = [&](const auto& list, config::VarId id) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i] && list[i]->name == name) {
        v.id = id;
        v.arg = std::to_string(i);
        v.set_slot = user;
        return true;
      }
    }
    return false;
  };
  if (by_name(cfg.maps, config::VarId::map_) || by_name(cfg.geos, config::VarId::geo_) ||
      by_name(cfg.split_clients, config::VarId::split_clients_))
    return true;
  if (cfg.geoip2) {
    const auto& vars = cfg.geoip2->variables;
    for (size_t i = 0; i < vars.size(); ++i) {
      if (vars[i]->lookup.name != name) continue;
      v.id = config::VarId::geoip2_;
      v.arg = std::to_string(i);
      v.set_slot = user;
      return true;
    }
  }
  if (user == config::kNoSlot) return false;
  // A prefixed name ($http_x, $arg_x...) that a `set` somewhere writes is
  // still the family's value in a request where that set did not run.
  if (config::lookup_variable(name, v) && v.id != config::VarId::user_) {
    v.set_slot = user;
    return true;
  }
  v.id = config::VarId::user_;
  v.index = user;
  return true;
}

}  // namespace

bool request_variable(const http::Exchange& ex, std::string_view name, std::string& out) {
  config::Variable v{};
  if (!(ex.config && defined_by_config(*ex.config, name, v)) && !config::lookup_variable(name, v)) return false;
  return http::append_variable(v, ex, out);
}

}  // namespace torii::ssi
