// mirror and mirror_request_body (ngx_http_mirror_module, modules/mirror),
// with nginx's contexts and merge: a block's own `mirror` lines replace the
// inherited list, `off` clears it, and mixing the two in one block is
// "duplicate" as in nginx.
#include <memory>

#include "config/directives.h"
#include "config/mirror_config.h"

namespace torii::config {

namespace {

// The block's own copy of the settings (copy on write: children that change
// nothing share their parent's).
MirrorConfig& own(Scope& s) {
  auto copy = std::make_shared<MirrorConfig>(s.settings->mirror ? *s.settings->mirror : MirrorConfig{});
  MirrorConfig& m = *copy;
  s.settings->mirror = std::move(copy);
  return m;
}

Status set_mirror(Compiler&, Scope& s, const Node& n) {
  const std::string& uri = n.args[0];
  const bool off_here = s.mirror_here && (!s.settings->mirror || s.settings->mirror->uris.empty());
  if (uri == "off" ? s.mirror_here : off_here) return node_error(n, "\"mirror\" directive is duplicate");
  MirrorConfig& m = own(s);
  if (!s.mirror_here) m.uris.clear();  // the first line here replaces what was inherited
  s.mirror_here = true;
  if (uri != "off") m.uris.push_back(uri);
  return Ok{};
}

Status set_mirror_request_body(Compiler&, Scope& s, const Node& n) {
  own(s).request_body = n.args[0] == "on";
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

constexpr DirectiveSpec kMirrorDirectives[] = {
    {"mirror", kHSL, kArgs1, false, false, kMain, &set_mirror},
    {"mirror_request_body", kHSL, kFlag, true, false, kMain, &set_mirror_request_body},
};

}  // namespace

std::span<const DirectiveSpec> mirror_directives() { return kMirrorDirectives; }

}  // namespace torii::config
