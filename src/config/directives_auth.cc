// The access-phase directives: auth_basic, auth_basic_user_file,
// auth_request, auth_request_set and satisfy. allow/deny stay in the core
// table (directives.cc).
#include <string>

#include "config/directives.h"
#include "core/quote.h"

namespace torii::config {

namespace {

Status set_auth_basic(Compiler&, Scope& s, const Node& n) {
  LimitsSettings& ls = s.settings->limits;
  if (n.args[0] == "off") {
    ls.auth_basic = false;
    ls.auth_basic_realm = {};
    return Ok{};
  }
  auto t = compile_template(n.args[0]);
  if (!t) return node_error(n, t.error());
  ls.auth_basic = true;
  ls.auth_basic_realm = std::move(*t);
  return Ok{};
}

Status set_auth_basic_user_file(Compiler& c, Scope& s, const Node& n) {
  // A relative name is relative to the main config file's folder, as nginx's.
  std::string path = n.args[0];
  if (!path.empty() && path[0] != '/') {
    const std::string& conf = c.cfg().conf_file;
    size_t slash = conf.rfind('/');
    path = (slash == std::string::npos ? std::string() : conf.substr(0, slash + 1)) + path;
  }
  auto t = compile_template(path);
  if (!t) return node_error(n, t.error());
  s.settings->limits.auth_basic_user_file = std::move(*t);
  return Ok{};
}

Status set_auth_request(Compiler&, Scope& s, const Node& n) {
  const std::string& uri = n.args[0];
  s.settings->limits.auth_request_uri = uri == "off" ? std::string() : uri;
  return Ok{};
}

Status set_auth_request_set(Compiler&, Scope& s, const Node& n) {
  std::string_view name = n.args[0];
  if (name.size() < 2 || name[0] != '$') return node_error(n, "invalid variable name " + q(name));
  name.remove_prefix(1);
  AuthRequestSet set;
  // $args and $limit_rate change the request, as `set` does with them.
  set.args = name == "args";
  set.limit_rate = name == "limit_rate";
  Variable v;
  if (!set.args && !set.limit_rate && (!lookup_variable(name, v) || !settable_slot(v, set.slot)))
    return node_error(n, "the duplicate " + q(name) + " variable");
  auto t = compile_template(n.args[1]);
  if (!t) return node_error(n, t.error());
  set.value = std::move(*t);
  auto& sets = s.settings->limits.auth_request_set;
  // Inherited only when none at this level, like nginx's array.
  if (!(s.limits_here & 4)) {
    sets.clear();
    s.limits_here |= 4;
  }
  sets.push_back(std::move(set));
  return Ok{};
}

Status set_satisfy(Compiler&, Scope& s, const Node& n) {
  if (n.args[0] != "all" && n.args[0] != "any")
    return node_error(n, "invalid value " + q(n.args[0]) + " in " + q(n.name) + " directive, it must be \"all\" or \"any\"");
  s.settings->limits.satisfy_any = n.args[0] == "any";
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;
constexpr Context kNone = kMain;

const DirectiveSpec kAuthDirectives[] = {
    {"auth_basic", kHSL | kLimitExcept, kArgs1, true, false, kNone, &set_auth_basic},
    {"auth_basic_user_file", kHSL | kLimitExcept, kArgs1, true, false, kNone, &set_auth_basic_user_file},
    {"auth_request", kHSL, kArgs1, true, false, kNone, &set_auth_request},
    {"auth_request_set", kHSL, kArgs2, false, false, kNone, &set_auth_request_set},
    {"satisfy", kHSL, kArgs1, true, false, kNone, &set_satisfy},
};

}  // namespace

std::span<const DirectiveSpec> auth_directives() { return kAuthDirectives; }

}  // namespace torii::config
