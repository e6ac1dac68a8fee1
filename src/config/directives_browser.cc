// The browser module's directives (nginx's ngx_http_browser_module), in
// http, server and location. A block's first modern_browser line replaces
// the inherited list and `unlisted` together, its first ancient_browser
// line the inherited strings and `netscape4` together (nginx's merge);
// the values inherit one by one.
#include <memory>
#include <string>

#include "config/browser_config.h"
#include "core/quote.h"
#include "config/directives.h"
#include "modules/browser/browser.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;
constexpr uint32_t kModernHere = 1;
constexpr uint32_t kAncientHere = 2;

// Settings are shared copy-on-write: a block changes its own copy.
BrowserConfig& browser_of(Scope& s) {
  auto copy = s.settings->browser ? std::make_shared<BrowserConfig>(*s.settings->browser)
                                  : std::make_shared<BrowserConfig>();
  BrowserConfig* raw = copy.get();
  s.settings->browser = std::move(copy);
  return *raw;
}

Status set_modern_browser(Compiler&, Scope& s, const Node& n) {
  int slot = -1;
  uint64_t version = 0;
  if (n.args.size() == 1) {
    // nginx refuses any other single word without saying why.
    if (n.args[0] != "unlisted") return node_error(n, "invalid parameter " + q(n.args[0]) + " in \"modern_browser\"");
  } else {
    slot = browser::browser_slot(n.args[0]);
    if (slot < 0) return node_error(n, "unknown browser name " + q(n.args[0]));
    if (!browser::parse_version(n.args[1], version)) return node_error(n, "invalid browser version " + q(n.args[1]));
  }
  BrowserConfig& b = browser_of(s);
  if (!(s.browser_here & kModernHere)) {
    b.modern.clear();
    b.modern_unlisted = false;
    s.browser_here |= kModernHere;
  }
  if (slot < 0) {
    b.modern_unlisted = true;
  } else {
    browser::add_modern(b, static_cast<uint8_t>(slot), version);
  }
  return Ok{};
}

Status set_ancient_browser(Compiler&, Scope& s, const Node& n) {
  BrowserConfig& b = browser_of(s);
  if (!(s.browser_here & kAncientHere)) {
    b.ancient.clear();
    b.netscape4 = false;
    s.browser_here |= kAncientHere;
  }
  for (const auto& a : n.args) {
    if (a == "netscape4") {
      b.netscape4 = true;
    } else {
      b.ancient.push_back(a);
    }
  }
  return Ok{};
}

Status set_modern_value(Compiler&, Scope& s, const Node& n) {
  browser_of(s).modern_value = n.args[0];
  return Ok{};
}

Status set_ancient_value(Compiler&, Scope& s, const Node& n) {
  browser_of(s).ancient_value = n.args[0];
  return Ok{};
}

constexpr DirectiveSpec kBrowserDirectives[] = {
    {"modern_browser", kHSL, kArgs1 | kArgs2, false, false, kMain, &set_modern_browser},
    {"ancient_browser", kHSL, kArgs1More, false, false, kMain, &set_ancient_browser},
    {"modern_browser_value", kHSL, kArgs1, false, false, kMain, &set_modern_value},
    {"ancient_browser_value", kHSL, kArgs1, false, false, kMain, &set_ancient_value},
};

}  // namespace

std::span<const DirectiveSpec> browser_directives() { return kBrowserDirectives; }

}  // namespace torii::config
