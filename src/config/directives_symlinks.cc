// disable_symlinks off | on | if_not_owner [from=PART] (nginx's http core).
// The walk itself is handlers/symlink_walk; the setting merges down with
// the rest (a block that sets it replaces both the mode and from=).
#include "config/directives.h"
#include "core/quote.h"

namespace torii::config {

namespace {

Status set_disable_symlinks(Compiler&, Scope& s, const Node& n) {
  DisableSymlinks d;
  bool mode_set = false;
  bool from_set = false;
  for (const auto& a : n.args) {
    if (a == "off" || a == "on" || a == "if_not_owner") {
      d.mode = a == "off" ? DisableSymlinks::Mode::off
               : a == "on" ? DisableSymlinks::Mode::on
                           : DisableSymlinks::Mode::if_not_owner;
      mode_set = true;
      continue;
    }
    if (a.rfind("from=", 0) == 0) {
      auto t = compile_template(std::string_view(a).substr(5));
      if (!t) return node_error(n, t.error());
      d.from = std::move(*t);
      from_set = true;
      continue;
    }
    return node_error(n, "invalid parameter " + q(a));
  }
  if (!mode_set) return node_error(n, "\"disable_symlinks\" must have \"off\", \"on\" or \"if_not_owner\" parameter");
  if (n.args.size() == 2) {
    if (!from_set) return node_error(n, "duplicate parameters " + q(n.args[0] + " " + n.args[1]));
    if (d.mode == DisableSymlinks::Mode::off) return node_error(n, "\"from=\" cannot be used with \"off\" parameter");
  }
  s.settings->disable_symlinks = std::move(d);
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

constexpr DirectiveSpec kSymlinkDirectives[] = {
    {"disable_symlinks", kHSL, kArgs1 | kArgs2, true, false, kMain, &set_disable_symlinks},
};

}  // namespace

std::span<const DirectiveSpec> symlink_directives() { return kSymlinkDirectives; }

}  // namespace torii::config
