#include "modules/browser/browser.h"

#include <algorithm>

#include "http/exchange.h"
#include "http/user_agent_quirks.h"

namespace torii::browser {

namespace {

// nginx's table: where the search starts, the string searched for, and
// how far past its start the version begins.
struct Mask {
  std::string_view browser;
  size_t skip;
  std::string_view name;
  size_t add;
};

constexpr Mask kMasks[] = {
    {"opera", 0, "Opera", 6},  // first: Opera may say MSIE too
    {"msie", 25, "MSIE ", 5},  // after "Mozilla/4.0 (compatible; "
    {"gecko", 13, "rv:", 3},   // after "Mozilla/5.0 ("
    {"safari", 13, "Safari/", 7},
    {"konqueror", 25, "Konqueror/", 10},  // after "Mozilla/5.0 (compatible; "
};

// Opera when the lines leave it out: no version reaches this one.
constexpr uint64_t kUnreachable = 4001000000ULL;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] | 0x20) : a[i];
    if (x != b[i]) return false;
  }
  return true;
}

// The version at the start of `v`, compared as nginx does while reading
// it: at a dot, a version already past the line's is modern.
bool version_is_modern(std::string_view v, uint64_t wanted) {
  uint64_t version = 0, ver = 0, scale = 1000000;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      ver = ver * 10 + static_cast<uint64_t>(c - '0');
      continue;
    }
    if (c != '.') break;
    version += ver * scale;
    if (version > wanted) return true;
    ver = 0;
    scale /= 100;
  }
  version += ver * scale;
  return version >= wanted;
}

}  // namespace

int browser_slot(std::string_view name) {
  for (size_t i = 0; i < std::size(kMasks); ++i)
    if (iequals(name, kMasks[i].browser)) return static_cast<int>(i);
  return -1;
}

bool parse_version(std::string_view text, uint64_t& out) {
  uint64_t version = 0, ver = 0, scale = 1000000;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      ver = ver * 10 + static_cast<uint64_t>(c - '0');
    } else if (c == '.') {
      version += ver * scale;
      ver = 0;
      scale /= 100;
    } else {
      return false;
    }
  }
  out = version + ver * scale;
  return true;
}

void add_modern(config::BrowserConfig& cfg, uint8_t slot, uint64_t version) {
  auto& list = cfg.modern;
  // Drop the Opera line a previous call added, then add it again if Opera
  // is still not listed.
  list.erase(std::remove_if(list.begin(), list.end(),
                            [](const auto& m) { return m.slot == 0 && m.version == kUnreachable; }),
             list.end());
  list.push_back({slot, version});
  std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.slot < b.slot; });
  if (list.front().slot != 0) list.insert(list.begin(), {0, kUnreachable});
}

bool is_modern(const config::BrowserConfig& cfg, const std::string_view* user_agent) {
  if (!user_agent) return cfg.modern_unlisted;
  const std::string_view ua = *user_agent;
  if (!cfg.modern.empty()) {
    for (const auto& m : cfg.modern) {
      const Mask& mask = kMasks[m.slot];
      if (mask.skip >= ua.size()) continue;
      size_t at = ua.find(mask.name, mask.skip);
      if (at == std::string_view::npos) continue;
      at += mask.add;
      if (at >= ua.size()) continue;
      return version_is_modern(ua.substr(at), m.version);
    }
    if (!cfg.modern_unlisted) return false;
  }
  if (cfg.netscape4 && ua.size() > 13 && ua.substr(0, 8) == "Mozilla/" && ua[8] > '0' && ua[8] < '5') return false;
  for (const auto& a : cfg.ancient)
    if (ua.find(a) != std::string_view::npos) return false;
  return cfg.modern_unlisted;
}

bool append_variable(config::VarId id, const http::Exchange& ex, std::string& out) {
  const http::Header* h = ex.req.find(http::HeaderToken::user_agent);
  std::string_view ua;
  if (h) ua = h->value;
  if (id == config::VarId::msie) {
    if (h && http::is_msie(ua)) out.push_back('1');
    return true;
  }
  static const config::BrowserConfig kDefault;
  const config::BrowserConfig& cfg = ex.settings().browser ? *ex.settings().browser : kDefault;
  const bool modern = is_modern(cfg, h ? &ua : nullptr);
  if (id == config::VarId::modern_browser && modern) out.append(cfg.modern_value);
  if (id == config::VarId::ancient_browser && !modern) out.append(cfg.ancient_value);
  return true;
}

}  // namespace torii::browser
