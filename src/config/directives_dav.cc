// The WebDAV module's directives (nginx's ngx_http_dav_module):
// dav_methods, dav_access, min_delete_depth, create_full_put_path. Each
// inherits into nested blocks; the handler is modules/dav.
#include <string>

#include "config/directives.h"
#include "core/quote.h"
#include "config/file_access.h"
#include "config/shared_args.h"
#include "core/ascii.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

// dav_methods off | METHOD...: the first line in a block replaces what the
// block inherited; more lines add to it (nginx's bitmask slot).
Status set_dav_methods(Compiler&, Scope& s, const Node& n) {
  DavSettings& d = s.settings->dav;
  if (!s.dav_methods_here) d.methods = 0;
  s.dav_methods_here = true;
  static constexpr NamedBit kNames[] = {
      {"off", 0},
      {"put", DavSettings::put},
      {"delete", DavSettings::del},
      {"mkcol", DavSettings::mkcol},
      {"copy", DavSettings::copy},
      {"move", DavSettings::move},
  };
  return add_named_bits(n, kNames, d.methods);
}

// dav_access [user:]rw|r [group:rw|r] [all:rw|r]: nginx's access slot.
Status set_dav_access(Compiler&, Scope& s, const Node& n) {
  return parse_file_access(n, s.settings->dav.access);
}

Status set_min_delete_depth(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > 0xffffffffu) return node_error(n, "\"min_delete_depth\" directive invalid number");
  s.settings->dav.min_delete_depth = static_cast<uint32_t>(v);
  return Ok{};
}

Status set_create_full_put_path(Compiler&, Scope& s, const Node& n) {
  s.settings->dav.create_full_put_path = n.args[0] == "on";
  return Ok{};
}

constexpr DirectiveSpec kDavDirectives[] = {
    {"dav_methods", kHSL, kArgs1More, false, false, kMain, &set_dav_methods},
    {"dav_access", kHSL, kArgs1More, true, false, kMain, &set_dav_access},
    {"min_delete_depth", kHSL, kArgs1, true, false, kMain, &set_min_delete_depth},
    {"create_full_put_path", kHSL, kFlag, true, false, kMain, &set_create_full_put_path},
};

}  // namespace

std::span<const DirectiveSpec> dav_directives() { return kDavDirectives; }

}  // namespace torii::config
