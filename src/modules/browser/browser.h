// The browser module (nginx's ngx_http_browser_module): $modern_browser,
// $ancient_browser and $msie, judged from the request's User-Agent with
// nginx's rules (case-sensitive substrings, versions X.X.X.X).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/browser_config.h"
#include "config/template.h"

namespace torii::http {
class Exchange;
}

namespace torii::browser {

// The place of a `modern_browser` name (any case) in nginx's table, or -1.
int browser_slot(std::string_view name);

// "X", "X.X", "X.X.X" or "X.X.X.X" packed as nginx packs it (each dot
// divides the scale, 1000000, by 100); false for any other character.
bool parse_version(std::string_view text, uint64_t& out);

// Appends a `modern_browser` line and keeps nginx's checking order.
void add_modern(config::BrowserConfig& cfg, uint8_t slot, uint64_t version);

// True for a modern browser, false for an ancient one; `user_agent` null
// when the request has none.
bool is_modern(const config::BrowserConfig& cfg, const std::string_view* user_agent);

// $modern_browser, $ancient_browser, $msie.
bool append_variable(config::VarId id, const http::Exchange& ex, std::string& out);

}  // namespace torii::browser
