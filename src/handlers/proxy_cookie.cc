#include "handlers/proxy_cookie.h"

#include <strings.h>

#include <string_view>
#include <vector>

#include "config/regex.h"
#include "core/ascii.h"
#include "handlers/proxy_rewrite_rule.h"
#include "http/exchange.h"
#include "http/variables.h"

namespace torii::handlers {

namespace {

struct Attribute {
  std::string key;
  std::string value;
  bool has_value = false;
  bool removed = false;
};

using core::iequals;

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// "a=1; Path=/; Secure" into its parts, spaces around names and values dropped.
std::vector<Attribute> split_cookie(std::string_view text) {
  std::vector<Attribute> out;
  while (true) {
    const size_t semi = text.find(';');
    const std::string_view part = text.substr(0, semi);
    const size_t eq = part.find('=');
    Attribute a;
    a.key = trimmed(part.substr(0, eq));
    if (eq != std::string_view::npos) {
      a.value = trimmed(part.substr(eq + 1));
      a.has_value = true;
    }
    out.push_back(std::move(a));
    if (semi == std::string_view::npos) break;
    text.remove_prefix(semi + 1);
  }
  return out;
}

enum Flag : unsigned {
  kSecureOn = 1 << 0,
  kSecureOff = 1 << 1,
  kHttpOnlyOn = 1 << 2,
  kHttpOnlyOff = 1 << 3,
  kSameSiteStrict = 1 << 4,
  kSameSiteLax = 1 << 5,
  kSameSiteNone = 1 << 6,
  kSameSiteOff = 1 << 7,
};

unsigned flag_bit(std::string_view name) {
  static constexpr std::pair<std::string_view, unsigned> kNames[] = {
      {"secure", kSecureOn},           {"nosecure", kSecureOff},     {"httponly", kHttpOnlyOn},
      {"nohttponly", kHttpOnlyOff},    {"samesite=strict", kSameSiteStrict}, {"samesite=lax", kSameSiteLax},
      {"samesite=none", kSameSiteNone}, {"nosamesite", kSameSiteOff}};
  for (const auto& [n, bit] : kNames)
    if (iequals(n, name)) return bit;
  return 0;  // an unknown value (from a variable) is skipped, as nginx does
}

// The flags of the first proxy_cookie_flags line that names this cookie.
unsigned flags_for(http::Exchange& ex, const config::ProxyConfig& p, const std::string& cookie) {
  for (const auto& line : p.cookie_flags) {
    const bool named = line.regex ? line.regex->match(cookie, nullptr) : iequals(http::render(line.name, ex), cookie);
    if (!named) continue;
    unsigned flags = 0;
    for (const auto& f : line.flags) flags |= flag_bit(http::render(f, ex));
    return flags;
  }
  return 0;
}

// nginx's edit: existing attributes are kept, set or removed; the ones
// asked for and missing are added at the end.
void edit_flags(std::vector<Attribute>& attrs, unsigned flags) {
  for (size_t i = 1; i < attrs.size(); ++i) {
    Attribute& a = attrs[i];
    if (iequals(a.key, "secure")) {
      if (flags & kSecureOn) flags &= ~unsigned(kSecureOn);
      else if (flags & kSecureOff) a.removed = true;
    } else if (iequals(a.key, "httponly")) {
      if (flags & kHttpOnlyOn) flags &= ~unsigned(kHttpOnlyOn);
      else if (flags & kHttpOnlyOff) a.removed = true;
    } else if (iequals(a.key, "samesite")) {
      static constexpr std::pair<unsigned, std::string_view> kSameSite[] = {
          {kSameSiteStrict, "Strict"}, {kSameSiteLax, "Lax"}, {kSameSiteNone, "None"}};
      bool handled = false;
      for (const auto& [bit, word] : kSameSite) {
        if (!(flags & bit)) continue;
        flags &= ~bit;
        if (!iequals(a.value, word)) {
          a.key = "SameSite";
          a.value = word;
          a.has_value = true;
        }
        handled = true;
        break;
      }
      if (!handled && (flags & kSameSiteOff)) a.removed = true;
    }
  }
  if (flags & kSecureOn) attrs.push_back({"Secure", "", false, false});
  if (flags & kHttpOnlyOn) attrs.push_back({"HttpOnly", "", false, false});
  if (flags & kSameSiteStrict) attrs.push_back({"SameSite", "Strict", true, false});
  else if (flags & kSameSiteLax) attrs.push_back({"SameSite", "Lax", true, false});
  else if (flags & kSameSiteNone) attrs.push_back({"SameSite", "None", true, false});
}

bool first_rule(http::Exchange& ex, const std::vector<config::ProxyRedirect>& rules, RuleMatch how,
                std::string& value) {
  for (const auto& r : rules)
    if (apply_rewrite_rule(ex, r, how, value)) return true;
  return false;
}

}  // namespace

bool rewrite_set_cookie(http::Exchange& ex, const config::ProxyConfig& p, std::string& value) {
  if (p.cookie_domains.empty() && p.cookie_paths.empty() && p.cookie_flags.empty()) return false;
  std::vector<Attribute> attrs = split_cookie(value);
  if (!attrs[0].has_value) return false;  // not "name=value": left as it is
  bool changed = false;
  for (size_t i = 1; i < attrs.size(); ++i) {
    Attribute& a = attrs[i];
    if (!a.has_value) continue;
    if (iequals(a.key, "domain")) changed |= first_rule(ex, p.cookie_domains, RuleMatch::domain, a.value);
    if (iequals(a.key, "path")) changed |= first_rule(ex, p.cookie_paths, RuleMatch::prefix, a.value);
  }
  if (!p.cookie_flags.empty()) {
    if (const unsigned flags = flags_for(ex, p, attrs[0].key); flags) {
      edit_flags(attrs, flags);
      changed = true;
    }
  }
  if (!changed) return false;
  std::string out;
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (attrs[i].removed) continue;
    if (i > 0) out += "; ";
    out += attrs[i].key;
    if (attrs[i].has_value) {
      out += '=';
      out += attrs[i].value;
    }
  }
  value = std::move(out);
  return true;
}

}  // namespace torii::handlers
