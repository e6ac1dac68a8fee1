// add_header_inherit and add_trailer_inherit (ngx_http_headers_module,
// nginx 1.29.3): how a block's add_header / add_trailer lines relate to
// the outer block's. `on`, the default, is nginx's classic rule: the outer
// lines apply only where a block has none of its own. `merge` appends the
// outer lines after the block's own; `off` drops them, so a block without
// lines of its own has none. The mode is itself inherited, so
// `add_header_inherit merge;` in http applies all the way down, and it is
// applied once the block's plain directives are read (where it stands
// among them does not matter), before the block's `if`s and children copy
// the result.
#include "config/directives.h"

namespace torii::config {

namespace {

using Inherit = LocationSettings::FieldInherit;

Status set_inherit(Inherit& mode, const Node& n) {
  const std::string& v = n.args[0];
  if (v == "on") mode = Inherit::on;
  else if (v == "off") mode = Inherit::off;
  else if (v == "merge") mode = Inherit::merge;
  else return node_error(n, "invalid value \"" + v + "\"");  // nginx's words for an enum
  return Ok{};
}

Status set_add_header_inherit(Compiler&, Scope& s, const Node& n) {
  return set_inherit(s.settings->add_header_inherit, n);
}

Status set_add_trailer_inherit(Compiler&, Scope& s, const Node& n) {
  return set_inherit(s.settings->add_trailer_inherit, n);
}

// `own_here`: the block has lines of its own (the list holds only them, the
// outer ones set aside in `outer`); otherwise the list is the outer one.
void apply(std::vector<AddHeader>& list, bool own_here, std::vector<AddHeader>& outer, Inherit mode) {
  if (!own_here) {
    if (mode == Inherit::off) list.clear();
    return;
  }
  if (mode == Inherit::merge) list.insert(list.end(), outer.begin(), outer.end());
  outer.clear();
}

constexpr DirectiveSpec kFieldInheritDirectives[] = {
    {"add_header_inherit", kHttp | kServer | kLocation | kLocationIf, kArgs1, true, false, kMain,
     &set_add_header_inherit},
    {"add_trailer_inherit", kHttp | kServer | kLocation | kLocationIf, kArgs1, true, false, kMain,
     &set_add_trailer_inherit},
};

}  // namespace

std::span<const DirectiveSpec> field_inherit_directives() { return kFieldInheritDirectives; }

void finish_field_inheritance(Scope& s) {
  apply(s.settings->add_headers, s.add_header_here, s.outer_headers, s.settings->add_header_inherit);
  apply(s.settings->add_trailers, s.add_trailer_here, s.outer_trailers, s.settings->add_trailer_inherit);
}

}  // namespace torii::config
