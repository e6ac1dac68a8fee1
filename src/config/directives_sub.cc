// The sub module's directives (nginx's ngx_http_sub_module): sub_filter,
// sub_filter_once, sub_filter_last_modified, sub_filter_types.
#include <algorithm>
#include <string>

#include "config/directives.h"
#include "config/sub_filter_config.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c | 0x20);
  return out;
}

// Copy-on-write: a block shares its parent's settings until it changes one.
template <typename F>
Status edit(Scope& s, F&& f) {
  auto c = s.settings->sub_filter ? std::make_shared<SubFilterConfig>(*s.settings->sub_filter)
                                  : std::make_shared<SubFilterConfig>();
  Status st = f(*c);
  if (!st) return st;
  s.settings->sub_filter = std::move(c);
  return Ok{};
}

// Scope::sub_filter_here bits: a block's first sub_filter or
// sub_filter_types replaces the inherited list (nginx's merge takes the
// parent's only when the block has none); later ones add to it.
enum : uint32_t { kPairsHere = 1, kTypesHere = 2 };

Status set_sub_filter(Compiler&, Scope& s, const Node& n) {
  if (n.args[0].empty()) return node_error(n, "empty search pattern");
  const bool first = !(s.sub_filter_here & kPairsHere);
  s.sub_filter_here |= kPairsHere;
  return edit(s, [&](SubFilterConfig& c) -> Status {
    if (first) c.pairs.clear();
    if (c.pairs.size() == 255) return node_error(n, "number of search patterns exceeds 255");
    // nginx lowers the whole argument before compiling it: the string is
    // matched case-insensitively, and variable names are case-insensitive.
    auto match = compile_template(lower(n.args[0]));
    if (!match) return node_error(n, match.error());
    auto replacement = compile_template(n.args[1]);
    if (!replacement) return node_error(n, replacement.error());
    c.pairs.push_back({std::move(*match), std::move(*replacement)});
    return Ok{};
  });
}

template <bool SubFilterConfig::*F>
Status flag(Compiler&, Scope& s, const Node& n) {
  return edit(s, [&](SubFilterConfig& c) -> Status {
    c.*F = n.args[0] == "on";
    return Ok{};
  });
}

Status set_types(Compiler&, Scope& s, const Node& n) {
  const bool first = !(s.sub_filter_here & kTypesHere);
  s.sub_filter_here |= kTypesHere;
  return edit(s, [&](SubFilterConfig& c) -> Status {
    if (first) c.types = CompressTypes{};
    for (const auto& a : n.args) {
      if (a == "*") {
        c.types.any = true;
        continue;
      }
      std::string type = lower(a);
      if (std::find(c.types.types.begin(), c.types.types.end(), type) == c.types.types.end())
        c.types.types.push_back(std::move(type));
    }
    return Ok{};
  });
}

constexpr DirectiveSpec kSubDirectives[] = {
    {"sub_filter", kHSL, kArgs2, false, false, kMain, &set_sub_filter},
    {"sub_filter_once", kHSL, kFlag, true, false, kMain, &flag<&SubFilterConfig::once>},
    {"sub_filter_last_modified", kHSL, kFlag, true, false, kMain, &flag<&SubFilterConfig::last_modified>},
    {"sub_filter_types", kHSL, kArgs1More, false, false, kMain, &set_types},
};

}  // namespace

std::span<const DirectiveSpec> sub_directives() { return kSubDirectives; }

}  // namespace torii::config
