// http-core directives that tune a client connection or a detail of a
// response (CoreSettings, core_settings.h), with nginx's contexts, defaults
// and error wording. Each merges down http -> server -> location as any
// plain setting does.
#include "config/directives.h"

namespace torii::config {

namespace {

// nginx's wording for a value its time and size slots cannot read.
Error slot_invalid(const Node& n) { return node_error(n, "\"" + n.name + "\" directive invalid value"); }

// ... and for a word its enum and bitmask slots do not know.
Error word_invalid(const Node& n, const std::string& word) {
  return node_error(n, "invalid value \"" + word + "\" in \"" + n.name + "\" directive");
}

template <Ms CoreSettings::*F>
Status set_core_time(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return slot_invalid(n);
  s.settings->core.*F = Ms(ms);
  return Ok{};
}

// keepalive_disable none | msie6 | safari ...
Status set_keepalive_disable(Compiler&, Scope& s, const Node& n) {
  uint8_t mask = 0;
  for (const auto& a : n.args) {
    if (a == "none") continue;
    if (a == "msie6") mask |= CoreSettings::kMsie6;
    else if (a == "safari") mask |= CoreSettings::kSafari;
    else return word_invalid(n, a);
  }
  s.settings->core.keepalive_disable = mask;
  return Ok{};
}

Status set_lingering_close(Compiler&, Scope& s, const Node& n) {
  using L = CoreSettings::LingeringClose;
  const std::string& v = n.args[0];
  if (v == "off") s.settings->core.lingering_close = L::off;
  else if (v == "on") s.settings->core.lingering_close = L::on;
  else if (v == "always") s.settings->core.lingering_close = L::always;
  else return word_invalid(n, v);
  return Ok{};
}

Status set_chunked_transfer_encoding(Compiler&, Scope& s, const Node& n) {
  s.settings->core.chunked_transfer_encoding = n.args[0] == "on";
  return Ok{};
}

Status set_if_modified_since(Compiler&, Scope& s, const Node& n) {
  using I = CoreSettings::IfModifiedSince;
  const std::string& v = n.args[0];
  if (v == "off") s.settings->core.if_modified_since = I::off;
  else if (v == "exact") s.settings->core.if_modified_since = I::exact;
  else if (v == "before") s.settings->core.if_modified_since = I::before;
  else return word_invalid(n, v);
  return Ok{};
}

// max_ranges N: nginx's number slot, "invalid number" for anything else.
Status set_max_ranges(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > 0x7fffffff) return node_error(n, "\"max_ranges\" directive invalid number");
  s.settings->core.max_ranges = uint32_t(v);
  return Ok{};
}

// postpone_output SIZE: nginx holds back output until this much is
// there (a whole packet's worth, 1460 by default). torii has no such point:
// a handler's bytes are queued as they come and written per loop turn, so
// small pieces of one turn already leave together. The value is checked
// and otherwise has no effect.
Status check_postpone_output(Compiler&, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return slot_invalid(n);
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

constexpr DirectiveSpec kCoreExtraDirectives[] = {
    {"keepalive_time", kHSL, kArgs1, true, false, kMain, &set_core_time<&CoreSettings::keepalive_time>},
    {"keepalive_disable", kHSL, kArgs1More, true, false, kMain, &set_keepalive_disable},
    {"lingering_close", kHSL, kArgs1, true, false, kMain, &set_lingering_close},
    {"lingering_time", kHSL, kArgs1, true, false, kMain, &set_core_time<&CoreSettings::lingering_time>},
    {"lingering_timeout", kHSL, kArgs1, true, false, kMain, &set_core_time<&CoreSettings::lingering_timeout>},
    {"chunked_transfer_encoding", kHSL, kFlag, true, false, kMain, &set_chunked_transfer_encoding},
    {"if_modified_since", kHSL, kArgs1, true, false, kMain, &set_if_modified_since},
    {"max_ranges", kHSL, kArgs1, true, false, kMain, &set_max_ranges},
    {"auth_delay", kHSL, kArgs1, true, false, kMain, &set_core_time<&CoreSettings::auth_delay>},
    {"postpone_output", kHSL, kArgs1, true, false, kMain, &check_postpone_output},
};

}  // namespace

std::span<const DirectiveSpec> core_extra_directives() { return kCoreExtraDirectives; }

}  // namespace torii::config
