// modern_browser, ancient_browser, modern_browser_value,
// ancient_browser_value (nginx's browser module): how a User-Agent is
// judged for $modern_browser and $ancient_browser.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torii::config {

struct BrowserConfig {
  // One `modern_browser NAME VERSION` line. `slot` is the browser's place
  // in nginx's table (opera, msie, gecko, safari, konqueror); `version`
  // is X.X.X.X packed as nginx packs it (browser::parse_version).
  struct Modern {
    uint8_t slot = 0;
    uint64_t version = 0;
  };
  // As nginx checks them: by slot (Opera first, added with a version no
  // browser reaches when not listed), lines of one browser in written order.
  std::vector<Modern> modern;
  bool modern_unlisted = false;       // `modern_browser unlisted`
  std::vector<std::string> ancient;   // `ancient_browser STRING...`: substrings
  bool netscape4 = false;             // `ancient_browser netscape4`
  std::string modern_value = "1";
  std::string ancient_value = "1";
};

}  // namespace torii::config
