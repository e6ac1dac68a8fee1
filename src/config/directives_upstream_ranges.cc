// *_force_ranges (proxy, fastcgi, uwsgi, scgi): byte ranges are served
// from an upstream's 200 of known length whatever its Accept-Ranges says,
// one setter for the four modules (config/upstream_settings).
#include "config/upstream_settings.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

Status set_force_ranges(Compiler&, Scope& s, const Node& n) {
  edit_upstream_settings(s, n.name).force_ranges = n.args[0] == "on";
  return Ok{};
}

constexpr DirectiveSpec kUpstreamRangeDirectives[] = {
    {"proxy_force_ranges", kHSL, kFlag, true, false, kMain, &set_force_ranges},
    {"fastcgi_force_ranges", kHSL, kFlag, true, false, kMain, &set_force_ranges},
    {"uwsgi_force_ranges", kHSL, kFlag, true, false, kMain, &set_force_ranges},
    {"scgi_force_ranges", kHSL, kFlag, true, false, kMain, &set_force_ranges},
};

}  // namespace

std::span<const DirectiveSpec> upstream_range_directives() { return kUpstreamRangeDirectives; }

}  // namespace torii::config
