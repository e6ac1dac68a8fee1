// The SSI and addition modules' directives (nginx's ngx_http_ssi_module,
// ngx_http_addition_module): ssi, ssi_silent_errors, ssi_value_length,
// ssi_last_modified, ssi_min_file_chunk, ssi_types,
// ssi_ignore_recycled_buffers; add_before_body, add_after_body,
// addition_types.
#include <algorithm>
#include <string>

#include "config/directives.h"
#include "config/ssi_config.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

// Copy-on-write: a block shares its parent's settings until it changes one.
template <typename F>
Status edit(Scope& s, F&& f) {
  auto c = s.settings->ssi ? std::make_shared<SsiConfig>(*s.settings->ssi) : std::make_shared<SsiConfig>();
  Status st = f(*c);
  if (!st) return st;
  s.settings->ssi = std::move(c);
  return Ok{};
}

template <bool SsiConfig::*F>
Status flag(Compiler&, Scope& s, const Node& n) {
  return edit(s, [&](SsiConfig& c) -> Status {
    c.*F = n.args[0] == "on";
    return Ok{};
  });
}

template <int64_t SsiConfig::*F>
Status size(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return node_error(n, "\"" + n.name + "\" directive invalid value");
  return edit(s, [&](SsiConfig& c) -> Status {
    c.*F = v;
    return Ok{};
  });
}

template <std::string SsiConfig::*F>
Status uri(Compiler&, Scope& s, const Node& n) {
  return edit(s, [&](SsiConfig& c) -> Status {
    c.*F = n.args[0];
    return Ok{};
  });
}

// Scope::ssi_here bits: a block's first *_types line replaces the
// inherited list (nginx's merge takes the parent's only when the block has
// none); later ones add to it.
enum : uint32_t { kSsiTypesHere = 1, kAdditionTypesHere = 2 };

void add_types(CompressTypes& t, bool first, const Node& n) {
  if (first) t = CompressTypes{};
  for (const auto& a : n.args) {
    if (a == "*") {
      t.any = true;
      continue;
    }
    std::string type = a;
    for (auto& ch : type)
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch | 0x20);
    if (std::find(t.types.begin(), t.types.end(), type) == t.types.end()) t.types.push_back(std::move(type));
  }
}

Status ssi_types(Compiler&, Scope& s, const Node& n) {
  const bool first = !(s.ssi_here & kSsiTypesHere);
  s.ssi_here |= kSsiTypesHere;
  return edit(s, [&](SsiConfig& c) -> Status {
    add_types(c.types, first, n);
    return Ok{};
  });
}

Status addition_types(Compiler&, Scope& s, const Node& n) {
  const bool first = !(s.ssi_here & kAdditionTypesHere);
  s.ssi_here |= kAdditionTypesHere;
  return edit(s, [&](SsiConfig& c) -> Status {
    add_types(c.addition_types, first, n);
    return Ok{};
  });
}

// nginx keeps recycled buffers apart; torii's filter reads every body in
// memory, so the setting has nothing to change.
Status accept_flag(Compiler&, Scope&, const Node&) { return Ok{}; }

constexpr DirectiveSpec kSsiDirectives[] = {
    {"ssi", kHSL | kLocationIf, kFlag, true, false, kMain, &flag<&SsiConfig::on>},
    {"ssi_silent_errors", kHSL, kFlag, true, false, kMain, &flag<&SsiConfig::silent_errors>},
    {"ssi_last_modified", kHSL, kFlag, true, false, kMain, &flag<&SsiConfig::last_modified>},
    {"ssi_ignore_recycled_buffers", kHSL, kFlag, true, false, kMain, &accept_flag},
    {"ssi_value_length", kHSL, kArgs1, true, false, kMain, &size<&SsiConfig::value_length>},
    {"ssi_min_file_chunk", kHSL, kArgs1, true, false, kMain, &size<&SsiConfig::min_file_chunk>},
    {"ssi_types", kHSL, kArgs1More, false, false, kMain, &ssi_types},
    {"add_before_body", kHSL, kArgs1, true, false, kMain, &uri<&SsiConfig::before_body>},
    {"add_after_body", kHSL, kArgs1, true, false, kMain, &uri<&SsiConfig::after_body>},
    {"addition_types", kHSL, kArgs1More, false, false, kMain, &addition_types},
};

}  // namespace

std::span<const DirectiveSpec> ssi_directives() { return kSsiDirectives; }

}  // namespace torii::config
