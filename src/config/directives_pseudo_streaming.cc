// flv (ngx_http_flv_module) and mp4 (ngx_http_mp4_module, with NGINX
// Plus's mp4_limit_rate and mp4_limit_rate_after): `flv` and `mp4` make
// the location's content handler (modules/flv, modules/mp4), as nginx's
// clcf->handler, so a nested location does not inherit them
// (config/loader.cc); the mp4_* values inherit.
#include "config/directives.h"
#include "core/quote.h"

namespace torii::config {

namespace {

Status set_flv(Compiler&, Scope& s, const Node&) {
  s.settings->pseudo_streaming = PseudoStreaming::flv;
  return Ok{};
}

Status set_mp4(Compiler&, Scope& s, const Node&) {
  s.settings->pseudo_streaming = PseudoStreaming::mp4;
  return Ok{};
}

Status set_mp4_size(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  (n.name == "mp4_buffer_size" ? s.settings->mp4.buffer_size : s.settings->mp4.max_buffer_size) = v;
  return Ok{};
}

Status set_mp4_start_key_frame(Compiler&, Scope& s, const Node& n) {
  s.settings->mp4.start_key_frame = n.args[0] == "on";
  return Ok{};
}

// "on" (1.1), "off", or a factor such as "1.5": kept in thousandths.
bool parse_factor(std::string_view v, int64_t& permille) {
  if (v == "on") {
    permille = 1100;
    return true;
  }
  if (v == "off") {
    permille = 0;
    return true;
  }
  int64_t whole = 0;
  int64_t frac = 0;
  int frac_digits = 0;
  bool dot = false;
  bool digits = false;
  for (const char c : v) {
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
    digits = true;
    if (!dot) {
      whole = whole * 10 + (c - '0');
      if (whole > 1'000'000) return false;
    } else if (frac_digits < 3) {
      frac = frac * 10 + (c - '0');
      ++frac_digits;
    }
  }
  if (!digits) return false;
  while (frac_digits++ < 3) frac *= 10;
  permille = whole * 1000 + frac;
  return true;
}

Status set_mp4_limit_rate(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_factor(n.args[0], v)) return invalid_value(n, n.args[0]);
  s.settings->mp4.limit_rate_permille = v;
  return Ok{};
}

Status set_mp4_limit_rate_after(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  s.settings->mp4.limit_rate_after_ms = ms;
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

constexpr DirectiveSpec kPseudoStreamingDirectives[] = {
    {"flv", kLocation, kArgs0, false, false, kMain, &set_flv},
    {"mp4", kLocation, kArgs0, false, false, kMain, &set_mp4},
    {"mp4_buffer_size", kHSL, kArgs1, true, false, kMain, &set_mp4_size},
    {"mp4_max_buffer_size", kHSL, kArgs1, true, false, kMain, &set_mp4_size},
    {"mp4_start_key_frame", kHSL, kFlag, true, false, kMain, &set_mp4_start_key_frame},
    {"mp4_limit_rate", kHSL, kArgs1, true, false, kMain, &set_mp4_limit_rate},
    {"mp4_limit_rate_after", kHSL, kArgs1, true, false, kMain, &set_mp4_limit_rate_after},
};

}  // namespace

std::span<const DirectiveSpec> pseudo_streaming_directives() { return kPseudoStreamingDirectives; }

}  // namespace torii::config
