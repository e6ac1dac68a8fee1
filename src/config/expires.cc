#include "config/expires.h"

#include "config/directives.h"

namespace torii::config {

const char* parse_expires(std::string_view v, Expires::Kind& kind, int64_t& seconds) {
  using Kind = Expires::Kind;
  if (kind != Kind::after_modified) {
    if (v == "epoch" || v == "max" || v == "off") {
      kind = v == "epoch" ? Kind::epoch : v == "max" ? Kind::max : Kind::off;
      return nullptr;
    }
  }
  bool minus = false;
  if (!v.empty() && v[0] == '@') {
    if (kind == Kind::after_modified) return "daily time cannot be used with \"modified\" parameter";
    kind = Kind::daily;
    v.remove_prefix(1);
  } else if (!v.empty() && (v[0] == '+' || v[0] == '-')) {
    minus = v[0] == '-';
    v.remove_prefix(1);
  }
  int64_t ms = 0;
  // nginx counts whole seconds here: "500ms" is not a value it takes.
  if (!parse_time_ms(v, ms) || ms % 1000 != 0) return "invalid value";
  seconds = ms / 1000;
  if (kind == Kind::daily && seconds > 24 * 60 * 60) return "daily time value must be less than 24 hours";
  if (minus) seconds = -seconds;
  return nullptr;
}

}  // namespace torii::config
