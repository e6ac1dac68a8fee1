// The userid module's directives (nginx's ngx_http_userid_filter_module):
// userid, userid_service, userid_name, userid_domain, userid_path,
// userid_expires, userid_flags, userid_p3p, userid_mark. Each inherits
// into nested blocks on its own.
#include <memory>
#include <string>

#include "config/directives.h"
#include "core/quote.h"
#include "config/template.h"
#include "config/userid_config.h"
#include "core/ascii.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

// Copy-on-write: a block shares its parent's settings until it changes one.
template <typename F>
Status edit(Scope& s, F&& f) {
  auto c = s.settings->userid ? std::make_shared<UseridConfig>(*s.settings->userid) : std::make_shared<UseridConfig>();
  if (!c->has_reset) {
    // $uid_reset has a slot in every config (loader.cc), which a `set`
    // writes, or is a map's; read when a cookie came.
    c->has_reset = lookup_variable("uid_reset", c->reset);
  }
  Status st = f(*c);
  if (!st) return st;
  s.settings->userid = std::move(c);
  return Ok{};
}

Status set_userid(Compiler&, Scope& s, const Node& n) {
  static constexpr std::pair<std::string_view, UseridConfig::Mode> kModes[] = {
      {"off", UseridConfig::Mode::off},
      {"log", UseridConfig::Mode::log},
      {"v1", UseridConfig::Mode::v1},
      {"on", UseridConfig::Mode::on},
  };
  for (const auto& [word, mode] : kModes) {
    if (core::iequals(n.args[0], word)) return edit(s, [m = mode](UseridConfig& c) -> Status {
        c.mode = m;
        return Ok{};
      });
  }
  return node_error(n, "invalid value " + q(n.args[0]));
}

Status set_service(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > 0x7fffffffffffffffull) return node_error(n, "\"userid_service\" directive invalid number");
  return edit(s, [&](UseridConfig& c) -> Status {
    c.service = static_cast<int64_t>(v);
    return Ok{};
  });
}

Status set_name(Compiler&, Scope& s, const Node& n) {
  return edit(s, [&](UseridConfig& c) -> Status {
    c.name = n.args[0];
    return Ok{};
  });
}

Status set_domain(Compiler&, Scope& s, const Node& n) {
  return edit(s, [&](UseridConfig& c) -> Status {
    c.domain = n.args[0] == "none" ? std::string() : "; domain=" + n.args[0];
    return Ok{};
  });
}

Status set_path(Compiler&, Scope& s, const Node& n) {
  return edit(s, [&](UseridConfig& c) -> Status {
    c.path = "; path=" + n.args[0];
    return Ok{};
  });
}

Status set_p3p(Compiler&, Scope& s, const Node& n) {
  return edit(s, [&](UseridConfig& c) -> Status {
    c.p3p = n.args[0] == "none" ? std::string() : n.args[0];
    return Ok{};
  });
}

Status set_expires(Compiler&, Scope& s, const Node& n) {
  int64_t seconds = 0;
  const std::string& a = n.args[0];
  if (a == "max") {
    seconds = UseridConfig::kMaxExpires;
  } else if (a != "off") {
    int64_t ms = 0;
    if (!parse_time_ms(a, ms) || ms % 1000 != 0) return node_error(n, "\"userid_expires\" directive invalid value");
    seconds = ms / 1000;
  }
  return edit(s, [&](UseridConfig& c) -> Status {
    c.expires = seconds;
    return Ok{};
  });
}

// userid_flags off | secure | httponly | samesite=strict|lax|none (up to
// three): the first line in a block replaces the inherited set.
Status set_flags(Compiler&, Scope& s, const Node& n) {
  if (n.args.size() > 3) return node_error(n, "invalid number of arguments in \"userid_flags\" directive");
  static constexpr std::pair<std::string_view, uint8_t> kFlags[] = {
      {"off", 0},
      {"secure", UseridConfig::secure},
      {"httponly", UseridConfig::httponly},
      {"samesite=strict", UseridConfig::samesite_strict},
      {"samesite=lax", UseridConfig::samesite_lax},
      {"samesite=none", UseridConfig::samesite_none},
  };
  uint8_t flags = 0;
  for (const std::string& a : n.args) {
    bool known = false;
    for (const auto& [word, bit] : kFlags) {
      if (core::iequals(a, word)) {
        flags |= bit;
        known = true;
        break;
      }
    }
    if (!known) return node_error(n, "invalid value " + q(a));
  }
  const bool first = !s.userid_flags_here;
  s.userid_flags_here = true;
  return edit(s, [&](UseridConfig& c) -> Status {
    c.flags = first ? flags : static_cast<uint8_t>(c.flags | flags);
    return Ok{};
  });
}

Status set_mark(Compiler&, Scope& s, const Node& n) {
  const std::string& a = n.args[0];
  char mark = '\0';
  if (a != "off") {
    const char ch = a.size() == 1 ? a[0] : '\0';
    if (!((ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '='))
      return node_error(n, "\"userid_mark\" directive value must be \"off\" or a single letter, digit or \"=\"");
    mark = ch;
  }
  return edit(s, [&](UseridConfig& c) -> Status {
    c.mark = mark;
    return Ok{};
  });
}

constexpr DirectiveSpec kUseridDirectives[] = {
    {"userid", kHSL, kArgs1, true, false, kMain, &set_userid},
    {"userid_service", kHSL, kArgs1, true, false, kMain, &set_service},
    {"userid_name", kHSL, kArgs1, true, false, kMain, &set_name},
    {"userid_domain", kHSL, kArgs1, true, false, kMain, &set_domain},
    {"userid_path", kHSL, kArgs1, true, false, kMain, &set_path},
    {"userid_expires", kHSL, kArgs1, true, false, kMain, &set_expires},
    {"userid_flags", kHSL, kArgs1More, false, false, kMain, &set_flags},
    {"userid_p3p", kHSL, kArgs1, true, false, kMain, &set_p3p},
    {"userid_mark", kHSL, kArgs1, true, false, kMain, &set_mark},
};

}  // namespace

std::span<const DirectiveSpec> userid_directives() { return kUseridDirectives; }

}  // namespace torii::config
