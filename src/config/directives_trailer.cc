// add_trailer (ngx_http_headers_module): fields sent after the body, with
// add_header's contexts, arguments and inheritance (a block's own lines
// replace the inherited list, unless add_trailer_inherit says otherwise).
#include "config/directives.h"

namespace torii::config {

namespace {

Status set_add_trailer(Compiler&, Scope& s, const Node& n) {
  AddHeader t;
  t.name = n.args[0];
  auto value = compile_template(n.args[1]);
  if (!value) return node_error(n, value.error());
  t.value = std::move(*value);
  if (n.args.size() == 3) {
    if (n.args[2] != "always") return node_error(n, "invalid parameter \"" + n.args[2] + "\"");
    t.always = true;
  }
  if (!s.add_trailer_here) {
    s.outer_trailers = std::move(s.settings->add_trailers);
    s.settings->add_trailers.clear();
    s.add_trailer_here = true;
  }
  s.settings->add_trailers.push_back(std::move(t));
  return Ok{};
}

constexpr DirectiveSpec kTrailerDirectives[] = {
    {"add_trailer", kHttp | kServer | kLocation | kLocationIf, kArgs2 | kArgs3, false, false, kMain, &set_add_trailer},
};

}  // namespace

std::span<const DirectiveSpec> trailer_directives() { return kTrailerDirectives; }

}  // namespace torii::config
