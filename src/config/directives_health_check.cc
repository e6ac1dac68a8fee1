// health_check inside upstream {}: interval= fails= passes= uri=
// match_status= timeout=. Parsed by the upstream block (directives_proxy.cc).
#include "config/directives_health_check.h"
#include "core/quote.h"

#include "config/directives.h"

namespace torii::config {

namespace {

Error invalid(const Node& n, std::string_view a) {
  return node_error(n, "invalid parameter " + q(a) + " in \"health_check\" directive");
}

bool after(std::string_view a, std::string_view prefix, std::string_view& value) {
  if (a.substr(0, prefix.size()) != prefix) return false;
  value = a.substr(prefix.size());
  return true;
}

bool parse_count(std::string_view v, unsigned& out) {
  uint64_t n = 0;
  if (!parse_number(v, n) || n == 0 || n > 1000) return false;
  out = unsigned(n);
  return true;
}

bool parse_status(std::string_view v, int& lo, int& hi) {
  auto code = [](std::string_view s, int& out) {
    uint64_t n = 0;
    if (!parse_number(s, n) || n < 100 || n > 599) return false;
    out = int(n);
    return true;
  };
  size_t dash = v.find('-');
  if (dash == std::string_view::npos) return code(v, lo) && code(v, hi);
  return code(v.substr(0, dash), lo) && code(v.substr(dash + 1), hi) && lo <= hi;
}

}  // namespace

Status parse_health_check(UpstreamGroupConfig& g, const Node& n) {
  if (n.block) return node_error(n, "directive \"health_check\" is not terminated by \";\"");
  if (g.health_check) return node_error(n, "\"health_check\" directive is duplicate");
  auto hc = std::make_shared<HealthCheckConfig>();
  bool timeout_set = false;
  for (std::string_view a : n.args) {
    std::string_view v;
    int64_t ms = 0;
    if (after(a, "interval=", v)) {
      if (!parse_time_ms(v, ms) || ms < 10) return invalid(n, a);
      hc->interval = Ms(ms);
    } else if (after(a, "timeout=", v)) {
      if (!parse_time_ms(v, ms) || ms < 1) return invalid(n, a);
      hc->timeout = Ms(ms);
      timeout_set = true;
    } else if (after(a, "fails=", v)) {
      if (!parse_count(v, hc->fails)) return invalid(n, a);
    } else if (after(a, "passes=", v)) {
      if (!parse_count(v, hc->passes)) return invalid(n, a);
    } else if (after(a, "uri=", v)) {
      if (v.empty() || v[0] != '/') return invalid(n, a);
      for (char c : v)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return invalid(n, a);
      hc->uri = std::string(v);
    } else if (after(a, "match_status=", v)) {
      if (!parse_status(v, hc->status_min, hc->status_max)) return invalid(n, a);
    } else {
      return invalid(n, a);
    }
  }
  // A probe never outlives its interval unless asked to.
  if (!timeout_set && hc->timeout > hc->interval) hc->timeout = hc->interval;
  g.health_check = std::move(hc);
  return Ok{};
}

}  // namespace torii::config
